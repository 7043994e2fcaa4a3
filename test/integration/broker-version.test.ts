/**
 * What RabbitMQ 4.3 refuses, named before the broker's 406 (in declare and check mode, and in the
 * editor's Check topology), with the broker's version; nothing is declared. Runs on a 4.3+ broker
 * (AMQP_URL=amqp://guest:guest@127.0.0.1:5674, .ci/run's 4.3 leg); skips with the reason on older ones.
 */
import assert from 'node:assert/strict';
import * as amqp from 'amqplib';
import { parseBrokerVersion, versionAtLeast } from '../../src/lib/topology';
import { AMQP_URL, Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow, packageNodes } from '../helpers/node-red';
import { skipBecause } from '../helpers/skips';

async function serverVersion(): Promise<string> {
  const model = await amqp.connect(AMQP_URL);
  try {
    return model.connection.serverProperties.version;
  } finally {
    await model.close();
  }
}

describe('RabbitMQ 4.3: what it refuses is named before its 406 (real broker)', function () {
  let broker: Broker;
  let names: Names;
  let version: string;

  before(async function () {
    version = await serverVersion();
    const parsed = parseBrokerVersion(version);
    if (!parsed || !versionAtLeast(parsed, 4, 3)) skipBecause(this, `the broker at AMQP_URL is RabbitMQ ${version}: what 4.3 refuses needs 4.3 or later (the 4.3 leg of .ci/run)`);
  });

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('v43');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  const refusal = (): string =>
    `queue '${names.mainQueue}': RabbitMQ ${version} refuses the argument x-queue-version 1 (classic queue version 1 was removed in 4.3): remove it, or set it to 2`;

  function flow(mode: 'declare' | 'check'): Array<Record<string, unknown>> {
    return [tab(), brokerNode(), configNode(names, { mode, mainQueueArgs: '{"x-queue-version":1}' }), consumerNode([[]])];
  }

  function errorsOf(id: string): unknown[] {
    const calls: unknown[] = [];
    helper.getNode(id).on('call:error', (call: { args: unknown[] }) => calls.push(call.args[0]));
    return calls;
  }

  it('the broker itself answers x-queue-version 1 with a 406 (what the sentence saves the user from)', async () => {
    const ch = await broker.ch();
    await assert.rejects(ch.assertQueue(names.mainQueue, { durable: true, arguments: { 'x-queue-version': 1 } }), (err: { code?: number }) => err.code === 406);
  });

  for (const mode of ['declare', 'check'] as const) {
    it(`${mode} mode: one sentence with the version and the way out; nothing declared, no consumer`, async () => {
      await loadFlow(flow(mode));
      const errors = errorsOf('consumer');
      await waitFor(() => errors.length > 0, 'the refusal');
      assert.equal(errors[0], refusal());
      for (const queue of [names.mainQueue, names.retryQueue, names.parkingQueue]) assert.equal(await broker.exists('queue', queue), false, `${queue} declared`);
      assert.equal(await broker.exists('exchange', names.mainExchange), false, 'main exchange declared');
    });
  }

  it("the editor's Check topology answers it, with the broker's version", async () => {
    const url = new URL(AMQP_URL);
    const values = { id: 'broker', name: 'v43', url: '', host: url.hostname, port: url.port || '5672', vhost: '/', tls: false, heartbeat: '30', reconnectMax: '30', managementUrl: '' };
    const credentials = { user: decodeURIComponent(url.username || 'guest'), password: decodeURIComponent(url.password || 'guest') };
    await helper.load(packageNodes, [{ ...values, type: 'retry-broker' }], { broker: credentials });
    const config = { mode: 'check', mainQueue: names.mainQueue, retryQueue: names.retryQueue, parkingQueue: names.parkingQueue, retryDelay: '1000', maxAttempts: '3', mainQueueArgs: '{"x-queue-version":1}' };
    const response = await helper.request().post('/rabbitmq-retry/check-topology').send({ config, broker: values, credentials });
    assert.equal(response.status, 200, response.text);
    const answer = JSON.parse(response.text) as { brokerVersion?: string; refused?: string[] };
    assert.equal(answer.brokerVersion, version);
    assert.deepEqual(answer.refused, [refusal()]);
  });
});
