/**
 * "Export definitions": the admin endpoint gives the dialog's topology (saved or not) as a RabbitMQ
 * definitions file in the broker node's vhost; imported into the real broker, it is exactly what
 * check mode checks for and what declare mode would declare, and a retried message takes the
 * imported route.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as amqp from 'amqplib';
import { resolveConnectTargets } from '../../src/lib/connection';
import { declareTopology, planTopology, probeTopology, type ChannelRunner, type RabbitDefinitions } from '../../src/lib/topology';
import { topologyFromDefinition } from '../../src/nodes/shared/topology-definition';
import { AMQP_URL, Broker, management, MANAGEMENT_URL, uniqueName, vhostPath } from '../helpers/broker';
import { helper, packageNodes } from '../helpers/node-red';

const PATH = '/rabbitmq-retry/topology-definitions';
const amqpUrl = new URL(AMQP_URL);
const vhost = decodeURIComponent(amqpUrl.pathname.slice(1)) || '/';
const brokerValues = { id: 'defs-broker', name: 'defs broker', url: '', host: amqpUrl.hostname, port: amqpUrl.port || '5672', vhost, tls: false, heartbeat: '30', reconnectMax: '30', managementUrl: '' };

async function managementUp(): Promise<boolean> {
  try {
    return (await management('GET', 'overview')).ok;
  } catch {
    return false;
  }
}

/**
 * Imports a definitions file as an operator would: through the management API (what the UI's
 * "Import definitions" calls), or with `rabbitmqctl import_definitions` on the broker's host when the
 * management plugin is off.
 */
async function importDefinitions(definitions: RabbitDefinitions): Promise<'management' | 'rabbitmqctl'> {
  if (await managementUp()) {
    const response = await management('POST', `definitions/${vhostPath()}`, definitions);
    assert.ok(response.ok, `import: ${response.status} ${await response.text()}`);
    return 'management';
  }
  const ctl = ['/usr/sbin/rabbitmqctl', '/usr/lib/rabbitmq/bin/rabbitmqctl'].find((p) => existsSync(p));
  if (!ctl) throw new Error(`neither the management API (${MANAGEMENT_URL}) nor rabbitmqctl is available to import definitions`);
  // Readable by the broker's user: Debian's rabbitmqctl runs as rabbitmq (and does not pass stdin on).
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-defs-'));
  try {
    const file = path.join(dir, 'definitions.json');
    writeFileSync(file, JSON.stringify(definitions), { mode: 0o644 });
    chmodSync(dir, 0o755);
    await promisify(execFile)(ctl, ['import_definitions', file], { timeout: 60_000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return 'rabbitmqctl';
}

describe('topology definitions export (admin endpoint, real broker)', function () {
  this.timeout(120_000);
  let broker: Broker;

  before(async function () {
    broker = await Broker.open();
  });

  after(async function () {
    await helper.unload();
    await broker.cleanup();
  });

  afterEach(async function () {
    await helper.unload();
  });

  async function post(body: unknown): Promise<{ status: number; text: string; disposition: string | undefined }> {
    const response = await helper.request().post(PATH).send(body);
    return { status: response.status, text: response.text, disposition: response.headers['content-disposition'] };
  }

  describe('endpoint', function () {
    beforeEach(async function () {
      await helper.load(packageNodes, [
        { ...brokerValues, type: 'retry-broker' },
        { id: 'defs-config', type: 'retry-config', broker: brokerValues.id, mode: 'check', mainQueue: 'deployed-orders', retryDelay: '2s', maxAttempts: '3' },
      ]);
    });

    it("answers the dialog's unsaved values as an attachment named after the main queue, in the broker's vhost", async function () {
      const config = { mode: 'check', mainExchange: 'orders-x', mainExchangeType: 'topic', routingKeys: 'order.created, order.*', mainQueue: 'orders', retryDelay: '1s, 10s', maxAttempts: '4', mainQueueArgs: '{"x-queue-type":"quorum"}' };
      const { status, text, disposition } = await post({ config, broker: { ...brokerValues, vhost: 'shop' } });
      assert.equal(status, 200, text);
      assert.equal(disposition, 'attachment; filename="orders-definitions.json"');
      const defs = JSON.parse(text) as RabbitDefinitions;
      assert.deepEqual(defs.vhosts, [{ name: 'shop' }]);
      assert.deepEqual(defs.queues.map((q) => q.name), ['orders', 'orders.retry.1s', 'orders.retry.10s', 'orders.parking']);
      assert.equal(defs.queues[0]?.arguments['x-queue-type'], 'quorum');
      assert.deepEqual(defs.bindings.map((b) => `${b.source}>${b.destination}:${b.routing_key}`), ['orders-x>orders:order.created', 'orders-x>orders:order.*']);
      assert.ok([...defs.exchanges, ...defs.queues, ...defs.bindings].every((o) => o.vhost === 'shop'));
      assert.doesNotMatch(text, /password|guest|"users"|"permissions"/);
    });

    it("takes the vhost from the broker's URL, an env URL included, and '/' without a broker", async function () {
      const config = { mainQueue: 'orders' };
      const fromUrl = await post({ config, broker: { ...brokerValues, url: 'amqp://someone:secret@rabbit.example:5672/eu%2Fshop' } });
      assert.equal(fromUrl.status, 200, fromUrl.text);
      assert.deepEqual((JSON.parse(fromUrl.text) as RabbitDefinitions).vhosts, [{ name: 'eu/shop' }]);
      assert.doesNotMatch(fromUrl.text, /secret|someone/);
      process.env.DEFS_EXPORT_TEST_URL = 'amqp://rabbit.example/from-env';
      try {
        const fromEnv = await post({ config, broker: { ...brokerValues, url: 'DEFS_EXPORT_TEST_URL', urlType: 'env' } });
        assert.equal(fromEnv.status, 200, fromEnv.text);
        assert.deepEqual((JSON.parse(fromEnv.text) as RabbitDefinitions).vhosts, [{ name: 'from-env' }]);
      } finally {
        delete process.env.DEFS_EXPORT_TEST_URL;
      }
      const none = await post({ config });
      assert.deepEqual((JSON.parse(none.text) as RabbitDefinitions).vhosts, [{ name: '/' }]);
    });

    it("answers 400 with the validator's message for a bad definition", async function () {
      const bad = await post({ config: { mainQueue: 'orders', mainQueueArgs: '{"x-dead-letter-exchange":"other"}' }, broker: brokerValues });
      assert.equal(bad.status, 400);
      assert.match(String((JSON.parse(bad.text) as { error?: string }).error), /x-dead-letter-exchange is set by the retry topology/);
      const noQueue = await post({ config: { mainQueue: '' } });
      assert.equal(noQueue.status, 400);
      assert.match(String((JSON.parse(noQueue.text) as { error?: string }).error), /main queue/);
    });

    it('gives a deployed configuration by id (GET), and 404 for an unknown one', async function () {
      const response = await helper.request().get(`${PATH}/defs-config`);
      assert.equal(response.status, 200, response.text);
      assert.equal(response.headers['content-disposition'], 'attachment; filename="deployed-orders-definitions.json"');
      const defs = JSON.parse(response.text) as RabbitDefinitions;
      assert.deepEqual(defs.vhosts, [{ name: vhost }]);
      assert.deepEqual(defs.queues.map((q) => [q.name, q.arguments['x-message-ttl']]), [['deployed-orders', undefined], ['deployed-orders.retry', 2000], ['deployed-orders.parking', undefined]]);
      assert.equal((await helper.request().get(`${PATH}/nope`)).status, 404);
    });
  });

  describe('imported into the broker', function () {
    beforeEach(async function () {
      await helper.load(packageNodes, [{ ...brokerValues, type: 'retry-broker' }]);
    });

    it('is exactly what check mode checks and declare mode declares; a rejected message takes the imported retry route', async function () {
      const id = uniqueName('defs');
      // Two layouts: the classic one (exchanges, shared fanout retry exchange, topic keys, an alternate
      // exchange) and quorum queues with backoff tiers over the default exchange.
      const classic = { mode: 'check', mainExchange: `${id}-x`, mainExchangeType: 'topic', routingKeys: 'order.created,order.*', alternateExchange: `${id}-ae`, retryExchange: `${id}-retry-x`, retryExchangeType: 'fanout', mainQueue: `${id}-classic`, retryDelay: '300', maxAttempts: '2' };
      const quorum = { mode: 'check', mainQueue: `${id}-quorum`, retryDelay: '1s, 5s', maxAttempts: '3', mainQueueArgs: '{"x-queue-type":"quorum"}', retryQueueArgs: '{"x-queue-type":"quorum"}', parkingQueueArgs: '{"x-queue-type":"quorum"}' };
      const all: RabbitDefinitions[] = [];
      for (const config of [classic, quorum]) {
        const { status, text } = await post({ config, broker: brokerValues });
        assert.equal(status, 200, text);
        const defs = JSON.parse(text) as RabbitDefinitions;
        broker.track('queue', ...defs.queues.map((q) => q.name));
        broker.track('exchange', ...defs.exchanges.map((x) => x.name));
        all.push(defs);
      }
      for (const defs of all) await importDefinitions(defs);

      const targets = resolveConnectTargets({ url: AMQP_URL, host: '', port: 0, vhost: '/', tls: false, heartbeat: 0 });
      const compare = (await managementUp()) ? MANAGEMENT_URL : '';
      for (const config of [classic, quorum]) {
        const topology = topologyFromDefinition({ ...config, id: 'probe', type: 'retry-config' });
        // Check mode: every object exists (and, with the management API, has the config's arguments).
        const inspection = await probeTopology(targets, topology, { managementUrl: compare });
        assert.deepEqual(inspection.objects.filter((o) => o.state !== 'ok').map((o) => `${o.kind} ${o.name}: ${o.problems.join('; ')}`), [], `${config.mainQueue}: check mode finds differences`);
        assert.equal(inspection.objects.length, planTopology(topology).exchanges.length + planTopology(topology).queues.length);
        assert.equal(inspection.compared, compare !== '', 'arguments compared through the management API when it answers');
        // Declare mode: the broker refuses a redeclare with any other argument (406), so this passing means identical.
        const model = await amqp.connect(AMQP_URL);
        model.on('error', () => undefined);
        try {
          const run: ChannelRunner = async (work) => {
            const channel = await model.createChannel();
            try {
              return await work(channel);
            } finally {
              await channel.close().catch(() => undefined);
            }
          };
          await declareTopology(run, planTopology({ ...topology, mode: 'declare' }));
        } finally {
          await model.close().catch(() => undefined);
        }
      }

      // The imported route: published with a key of the topic binding, rejected by a consumer, it
      // dead-letters through the retry exchange, waits its TTL and comes back to the main queue.
      await broker.publish(classic.mainExchange, 'order.shipped', { order: 1 });
      const first = await broker.take(classic.mainQueue);
      assert.equal(first.fields.redelivered, false);
      const ch = await broker.ch();
      await broker.publish(classic.mainExchange, 'order.created', { order: 2 });
      let rejected: amqp.GetMessage | false = false;
      for (let i = 0; i < 600 && !rejected; i++) {
        rejected = await ch.get(classic.mainQueue, { noAck: false });
        if (!rejected) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(rejected, 'the second message did not reach the main queue');
      ch.nack(rejected, false, false);
      const back = await broker.take(classic.mainQueue);
      const death = (back.properties.headers?.['x-death'] as Array<{ queue: string; count: number }> | undefined) ?? [];
      assert.deepEqual(death.map((d) => [d.queue, d.count]).sort(), [[classic.mainQueue, 1], [`${classic.mainQueue}.retry`, 1]].sort());
      // A key no binding routes lands in the unrouted queue through the imported alternate exchange.
      await broker.publish(classic.mainExchange, 'invoice.created', { order: 3 });
      assert.deepEqual(JSON.parse((await broker.take(`${classic.mainExchange}.unrouted`)).content.toString()), { order: 3 });
    });
  });
});
