/**
 * Declare and check modes against the real broker, including topology created beforehand by other
 * tools (the management HTTP API, plain amqplib) and a user without configure permission.
 */
import assert from 'node:assert/strict';
import { MGMT_ELSEWHERE, skipBecause } from '../helpers/skips';
import { resolveConnectTargets } from '../../src/lib/connection';
import { checkTopology, defaultManagementUrl, FIRST_DIFFERENCE_ONLY, ManagementApi, planTopology, type ChannelRunner } from '../../src/lib/topology';
import { topologyFromDefinition } from '../../src/nodes/shared/topology-definition';
import { AMQP_URL, Broker, management, MANAGEMENT_URL, uniqueName, vhostPath, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, declareSeedTopology, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

describe('retry topology on the real broker', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('topo');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** The seed's topology, created by the management HTTP API, as an operator's script would. */
  async function createSeedWithManagementApi(): Promise<void> {
    const v = vhostPath();
    await management('PUT', `exchanges/${v}/${encodeURIComponent(names.mainExchange)}`, { type: 'direct', durable: true });
    await management('PUT', `exchanges/${v}/${encodeURIComponent(names.retryExchange)}`, { type: 'fanout', durable: true });
    await management('PUT', `queues/${v}/${encodeURIComponent(names.mainQueue)}`, { durable: true, arguments: { 'x-dead-letter-exchange': names.retryExchange } });
    await management('PUT', `queues/${v}/${encodeURIComponent(names.retryQueue)}`, { durable: true, arguments: { 'x-message-ttl': 500, 'x-dead-letter-exchange': names.mainExchange } });
    await management('PUT', `queues/${v}/${encodeURIComponent(names.parkingQueue)}`, { durable: true });
    await management('POST', `bindings/${v}/e/${encodeURIComponent(names.mainExchange)}/q/${encodeURIComponent(names.mainQueue)}`, { routing_key: names.routingKey });
    await management('POST', `bindings/${v}/e/${encodeURIComponent(names.retryExchange)}/q/${encodeURIComponent(names.retryQueue)}`, { routing_key: '' });
  }

  /** The same topology created with plain amqplib. */
  async function createSeedWithAmqplib(): Promise<void> {
    await declareSeedTopology(await broker.ch(), names);
  }

  function retryFlow(config: Record<string, unknown>, brokerExtra: Record<string, unknown> = {}): Array<Record<string, unknown>> {
    return [
      tab(),
      brokerNode(brokerExtra),
      configNode(names, config),
      consumerNode([['decide', 'seen']]),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'decide', type: 'function', z: 'flow', func: 'return msg.payload.ok ? [msg, null] : [null, msg];', outputs: 2, wires: [['ack'], ['retry']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
    ];
  }

  /** How a queue's argument mismatch ends: the way out. */
  const wayOut = (queue: string): string =>
    ` (a queue's arguments cannot be changed: move its messages elsewhere, delete '${queue}' and redeploy, or use another queue name; see "Mismatches" in the topology guide)`;

  function capture(id: string, method: 'error' | 'warn' | 'status'): unknown[] {
    const calls: unknown[] = [];
    helper.getNode(id).on(`call:${method}`, (call: { args: unknown[] }) => calls.push(call.args[0]));
    return calls;
  }

  /** RabbitMQ 4 reports the default `x-queue-type: classic` on every classic queue; 3.x does not. */
  function withoutClassicType(args: Record<string, unknown>): Record<string, unknown> {
    const { 'x-queue-type': type = 'classic', ...rest } = args;
    assert.equal(type, 'classic');
    return rest;
  }

  const consumerCount = (): Promise<number> => broker.consumerCount(names.mainQueue);

  /** Runs a retrying message through to the parking queue: proves the topology works end to end. */
  async function proveRetryCycle(seen: Msg[]): Promise<void> {
    await broker.publish(names.mainExchange, names.routingKey, { ok: false });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked after 3 attempts');
    assert.deepEqual(seen.map((m) => m.retry.attempt), [1, 2, 3]);
  }

  for (const [tool, create] of [
    ['the management API', createSeedWithManagementApi],
    ['amqplib', createSeedWithAmqplib],
  ] as const) {
    it(`check mode runs against the seed topology created by ${tool}, with no declare (a user without configure permission)`, async () => {
      await create();
      // A user that may read and write but not configure: any declare would fail with 403.
      const user = uniqueName('reader');
      await management('PUT', `users/${encodeURIComponent(user)}`, { password: 'pw', tags: 'monitoring' });
      try {
        await management('PUT', `permissions/${vhostPath()}/${encodeURIComponent(user)}`, { configure: '^$', write: '.*', read: '.*' });
        const url = new URL(AMQP_URL);
        url.username = user;
        url.password = 'pw';
        await loadFlow(retryFlow({ mode: 'check', retryDelay: '500' }, { url: url.toString(), managementUrl: MANAGEMENT_URL }));
        const seen: Msg[] = [];
        helper.getNode('seen').on('input', (m: Msg) => seen.push(m));
        const errors = capture('consumer', 'error');
        await waitFor(async () => (await consumerCount()) === 1, 'the consumer in check mode').catch((err: unknown) => {
          throw new Error(`${(err as Error).message}; consumer errors: ${errors.join(' / ')}`);
        });
        await proveRetryCycle(seen);
        assert.deepEqual(errors, []);
      } finally {
        await management('DELETE', `users/${encodeURIComponent(user)}`);
      }
    });
  }

  it('declare mode accepts the same topology created by the management API (numbers compare by value)', async () => {
    await createSeedWithManagementApi();
    await loadFlow(retryFlow({ mode: 'declare', retryDelay: '500' }));
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (m: Msg) => seen.push(m));
    const errors = capture('consumer', 'error');
    await waitFor(async () => (await consumerCount()) === 1, 'the consumer in declare mode');
    await proveRetryCycle(seen);
    assert.deepEqual(errors, []);
  });

  it('declare mode reports a 406 mismatch naming queue and argument, on a throwaway channel, without a reconnect storm', async () => {
    await createSeedWithAmqplib();
    // Config without a retry exchange wants per-queue routing: x-dead-letter-exchange '' instead of the seed's.
    await loadFlow(retryFlow({ mode: 'declare', retryExchange: '' }));
    const errors = capture('consumer', 'error');
    const statuses = capture('consumer', 'status') as Array<{ fill?: string; text?: string }>;
    const brokerNodeRuntime = helper.getNode('broker') as unknown as { connection: { on(e: string, l: () => void): void; state: { phase: string } } };
    let disconnects = 0;
    brokerNodeRuntime.connection.on('disconnected', () => (disconnects += 1));
    await waitFor(() => errors.length > 0, 'the mismatch error');
    assert.equal(
      errors[0],
      `queue '${names.mainQueue}': x-dead-letter-exchange is '${names.retryExchange}' on the broker, config says the default exchange ('')${wayOut(names.mainQueue)}; ${FIRST_DIFFERENCE_ONLY}`,
    );
    await waitFor(() => statuses.some((s) => s.fill === 'red' && s.text === errors[0]), 'the red status with the same text');
    // The connection stays up (the 406 closed only a throwaway channel) and the error is reported once.
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(brokerNodeRuntime.connection.state.phase, 'connected');
    assert.equal(disconnects, 0);
    assert.equal(errors.length, 1);
    assert.equal(await consumerCount(), 0);
  });

  it("declare mode with the management API looks the refused queue up and says every argument that differs", async () => {
    await createSeedWithAmqplib();
    // Per-queue routing wants x-dead-letter-exchange '' and an x-dead-letter-routing-key: two differences, the 406 names one.
    await loadFlow(retryFlow({ mode: 'declare', retryExchange: '' }, { managementUrl: MANAGEMENT_URL }));
    const errors = capture('consumer', 'error');
    await waitFor(() => errors.length > 0, 'the mismatch error');
    assert.equal(
      errors[0],
      `queue '${names.mainQueue}': x-dead-letter-exchange is '${names.retryExchange}' on the broker, config says the default exchange (''); ` +
        `x-dead-letter-routing-key is none on the broker, config says '${names.retryQueue}'${wayOut(names.mainQueue)}`,
    );
    assert.equal(await consumerCount(), 0);
  });

  it('check mode with the management API names each argument that differs', async () => {
    await createSeedWithAmqplib();
    await loadFlow(retryFlow({ mode: 'check', retryDelay: '9000' }, { managementUrl: MANAGEMENT_URL }));
    const errors = capture('consumer', 'error');
    await waitFor(() => errors.length > 0, 'the mismatch error');
    assert.equal(errors[0], `queue '${names.retryQueue}': x-message-ttl is 500 on the broker, config says 9000${wayOut(names.retryQueue)}`);
    assert.equal(await consumerCount(), 0);
  });

  describe("the management URL's variable not set (an example imported as it is)", () => {
    const target = resolveConnectTargets({ url: AMQP_URL, host: '', port: 0, vhost: '/', tls: false, heartbeat: 0 })[0]!;

    it("tries the API at the broker's host: check mode compares arguments, said once in the log, no warning or error", async function () {
      // The default is RabbitMQ's port 15672 at the broker's host; a broker whose API is elsewhere (RabbitMQ 4 beside the host's) cannot show it.
      if (new URL(MANAGEMENT_URL).origin !== new URL(defaultManagementUrl(target)).origin) skipBecause(this, MGMT_ELSEWHERE);
      await createSeedWithAmqplib();
      const flow = retryFlow({ mode: 'check', retryDelay: '9000' }, { managementUrl: '${RR_MGMT_NOT_SET_ANYWHERE}' });
      await loadFlow(flow);
      const errors = capture('consumer', 'error');
      await waitFor(() => errors.length > 0, 'the mismatch error');
      assert.equal(errors[0], `queue '${names.retryQueue}': x-message-ttl is 500 on the broker, config says 9000${wayOut(names.retryQueue)}`);
      // What the broker logged: the note once, at info level (40), so nothing in the debug sidebar (warn 30, error 20).
      const fromBroker = helper.log().args.map(([entry]) => entry).filter((entry) => entry.id === 'broker' && !String(entry.msg).startsWith('connected to'));
      assert.deepEqual(fromBroker.map((entry) => [entry.level, entry.msg]), [
        [40, `management API URL \${RR_MGMT_NOT_SET_ANYWHERE}: environment variable not set; trying the broker's own at ${defaultManagementUrl(target)} (arguments are compared if it answers)`],
      ]);
    });

    it('does not fail check mode when that API does not answer: only existence is checked, and the warning says why', async () => {
      await createSeedWithAmqplib();
      const topology = topologyFromDefinition(configNode(names, { mode: 'check', retryDelay: '500', id: 'probe' }));
      // The test's own channel (Broker.ch() opens a new one after a 404 closed it).
      const run: ChannelRunner = async (work) => work(await broker.ch());
      // Port 1 answers nothing: as a broker host without the management plugin.
      const nowhere = 'http://127.0.0.1:1';
      const result = await checkTopology(run, planTopology(topology), ManagementApi.forTarget(nowhere, target, true));
      assert.equal(result.argumentsUnchecked, true);
      assert.equal(result.warnings.length, 1);
      assert.match(result.warnings[0]!, /^check mode: queues and exchanges exist; their arguments were not compared \(management API at http:\/\/127\.0\.0\.1:1 did not answer: .+; set the management API URL on the broker to compare them\)$/);
      // The same URL given on purpose is the broker's configuration: its failure is an error.
      await assert.rejects(checkTopology(run, planTopology(topology), ManagementApi.forTarget(nowhere, target)), /management API at http:\/\/127\.0\.0\.1:1 did not answer/);
    });
  });

  it('check mode reports every missing object (the status in one line) and recovers once they exist', async () => {
    await loadFlow(retryFlow({ mode: 'check' }));
    const errors = capture('consumer', 'error');
    const statuses = capture('consumer', 'status') as Array<{ fill?: string; text?: string }>;
    await waitFor(() => errors.length > 0, 'the missing-object error');
    const text = String(errors[0]);
    for (const name of [names.mainExchange, names.retryExchange, names.mainQueue, names.retryQueue, names.parkingQueue]) {
      assert.ok(text.includes(`'${name}' does not exist on the broker (check mode never creates it)`), `${name} in: ${text}`);
    }
    // The status is one sentence listing the objects, cut for the status bar; not one sentence per object.
    await waitFor(() => statuses.some((s) => s.fill === 'red'), 'the red status');
    const status = String(statuses.find((s) => s.fill === 'red')?.text);
    assert.ok(status.startsWith(`topology check failed: missing exchange '${names.mainExchange}'`), status);
    assert.match(status, /( \+\d more \(see the log\)|'${names.parkingQueue}')$/);
    assert.ok(status.length <= 120 && !status.includes('does not exist'), status);
    assert.equal(await broker.exists('queue', names.mainQueue), false, 'check mode must not create anything');
    await createSeedWithAmqplib();
    await waitFor(async () => (await consumerCount()) === 1, 'the consumer after the topology appeared (re-check with backoff)');
  });

  it('declare mode creates the whole topology with its arguments', async () => {
    await loadFlow(retryFlow({ mode: 'declare', retryDelay: '700', parkingQueueArgs: '{"x-queue-mode":"lazy"}' }));
    await broker.waitForConsumer(names.mainQueue);
    const q = (await (await management('GET', `queues/${vhostPath()}/${encodeURIComponent(names.retryQueue)}`)).json()) as { arguments: Record<string, unknown>; durable: boolean };
    assert.deepEqual(withoutClassicType(q.arguments), { 'x-dead-letter-exchange': names.mainExchange, 'x-message-ttl': 700 });
    assert.equal(q.durable, true);
    const p = (await (await management('GET', `queues/${vhostPath()}/${encodeURIComponent(names.parkingQueue)}`)).json()) as { arguments: Record<string, unknown> };
    assert.deepEqual(withoutClassicType(p.arguments), { 'x-queue-mode': 'lazy' });
  });

  it('reports a deleted queue (the broker cancels the consumer) as a warning, and recovers when it comes back', async () => {
    await loadFlow(retryFlow({ mode: 'declare' }));
    const warnings = capture('consumer', 'warn');
    await broker.waitForConsumer(names.mainQueue);
    await (await broker.ch()).deleteQueue(names.mainQueue);
    await waitFor(() => warnings.some((e) => String(e).includes(`the broker cancelled the consumer of queue '${names.mainQueue}'`)), 'the cancel warning');
    // Declare mode re-declares it on the next check.
    await waitFor(async () => (await consumerCount()) === 1, 'the consumer back on the re-declared queue');
  });
});
