/**
 * Issue 7: pause / resume a consumer from the flow, and ordered mode across several consumers
 * (single active consumer), in the Node-RED runtime against the real broker.
 */
import assert from 'node:assert/strict';
import { Broker, closeConnectionsNamed, management, vhostPath, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, TEST_BROKER_NAME, uniqueNames, type Names } from '../helpers/flows';
import { helper, lastStatus, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;
type Call = { args: unknown[] };

/** The status text a node showed last. */
function statusText(id: string): string {
  return lastStatus(id)?.text ?? '';
}

describe('consumer control (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('control');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  describe('pause / resume', () => {
    async function loadFlowWithHeldMessages(): Promise<{ seen: Msg[]; warnings: string[] }> {
      await loadFlow([
        tab(),
        brokerNode(),
        configNode(names),
        consumerNode([['seen']]),
        { id: 'seen', type: 'helper', z: 'flow' },
        { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      ]);
      const seen: Msg[] = [];
      const warnings: string[] = [];
      helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
      for (const id of ['ack', 'consumer']) helper.getNode(id).on('call:warn', (call: Call) => warnings.push(String(call.args[0])));
      await broker.waitForConsumer(names.mainQueue);
      return { seen, warnings };
    }

    it('pause cancels the consumer and keeps in-flight messages settleable; it stays paused over a reconnect; resume consumes again', async () => {
      const { seen, warnings } = await loadFlowWithHeldMessages();
      await broker.publish(names.mainExchange, names.routingKey, { n: 1 });
      await waitFor(() => seen.length === 1, 'the first message');

      helper.getNode('consumer').receive({ topic: 'pause' });
      await waitFor(async () => (await broker.consumerCount(names.mainQueue)) === 0, 'the consumer cancelled');
      await waitFor(() => statusText('consumer').startsWith('paused'), 'the paused status');
      await broker.publish(names.mainExchange, names.routingKey, { n: 2 });
      assert.equal(await broker.messageCount(names.mainQueue), 1, 'nobody takes messages while paused');

      // The message in flight is still acked on its channel: the pause did not close it.
      helper.getNode('ack').receive(seen[0]!);
      await waitFor(() => statusText('consumer').includes('✓1 '), 'the in-flight message acked');

      // A reconnect does not resume the consumer: the status leaves "paused" while the connection is
      // down, and comes back to it.
      const texts: string[] = [];
      helper.getNode('consumer').on('call:status', (call: Call) => texts.push(String((call.args[0] as { text?: string }).text)));
      await closeConnectionsNamed(`node-red ${TEST_BROKER_NAME}`);
      await waitFor(() => {
        const away = texts.findIndex((t) => !t.startsWith('paused'));
        return away >= 0 && texts.slice(away).some((t) => t.startsWith('paused'));
      }, 'paused again after the reconnect');
      assert.equal(await broker.consumerCount(names.mainQueue), 0);
      assert.equal(await broker.messageCount(names.mainQueue), 1);
      assert.equal(seen.length, 1);

      helper.getNode('consumer').receive({ topic: 'resume' });
      await waitFor(() => seen.length === 2, 'the message published while paused');
      assert.deepEqual(seen[1]!.payload, { n: 2 });
      helper.getNode('ack').receive(seen[1]!);
      await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0 && (await broker.consumerCount(names.mainQueue)) === 1, 'consuming again');
      assert.ok(!warnings.some((w) => /ignored/.test(w)), warnings.join('\n'));
    });

    it('any other msg.topic is an error naming the two it takes', async () => {
      await loadFlowWithHeldMessages();
      const consumer = helper.getNode('consumer');
      const errors: string[] = [];
      consumer.on('call:error', (call: Call) => errors.push(String(call.args[0])));
      consumer.receive({ topic: 'stop' });
      await waitFor(() => errors.length === 1, 'the error');
      assert.match(errors[0]!, /msg.topic must be 'pause' or 'resume' \(got "stop"\)/);
      assert.equal(await broker.consumerCount(names.mainQueue), 1);
    });
  });

  describe('ordered mode across consumers (single active consumer)', () => {
    it('two ordered consumers on one queue: one works at a time, in order, and the standby takes over when the active one stops', async () => {
      const work = 'setTimeout(() => node.send(msg), 20); return null;';
      const ordered = { mode: 'ordered', orderedPause: '0.1' };
      await loadFlow([
        tab(),
        brokerNode(),
        configNode(names),
        { ...consumerNode([['startA', 'workA']], ordered), id: 'consumerA' },
        { ...consumerNode([['startB', 'workB']], ordered), id: 'consumerB' },
        ...['A', 'B'].flatMap((who) => [
          { id: `start${who}`, type: 'helper', z: 'flow' },
          { id: `work${who}`, type: 'function', z: 'flow', func: work, outputs: 1, wires: [['ack', `done${who}`]] },
          { id: `done${who}`, type: 'helper', z: 'flow' },
        ]),
        { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      ]);
      const started: Array<{ who: string; n: number }> = [];
      let working = 0;
      let mostAtOnce = 0;
      for (const who of ['A', 'B']) {
        helper.getNode(`start${who}`).on('input', (msg: Msg) => {
          started.push({ who, n: (msg.payload as { n: number }).n });
          working += 1;
          mostAtOnce = Math.max(mostAtOnce, working);
        });
        helper.getNode(`done${who}`).on('input', () => (working -= 1));
      }
      await waitFor(async () => (await broker.consumerCount(names.mainQueue)) === 2, 'both consumers');
      const info = (await (await management('GET', `queues/${vhostPath()}/${encodeURIComponent(names.mainQueue)}`)).json()) as { arguments: Record<string, unknown> };
      assert.equal(info.arguments['x-single-active-consumer'], true);

      for (let n = 1; n <= 20; n++) await broker.publish(names.mainExchange, names.routingKey, { n });
      await waitFor(() => started.length >= 10, 'half of the messages');
      const active = started[0]!.who;
      helper.getNode(`consumer${active}`).receive({ topic: 'pause' });
      await waitFor(() => started.length === 20 && working === 0, 'all messages');

      assert.deepEqual(started.map((s) => s.n), Array.from({ length: 20 }, (_, i) => i + 1), 'processed in order, each once');
      assert.equal(mostAtOnce, 1, 'never two at once');
      const standby = active === 'A' ? 'B' : 'A';
      const firstOfStandby = started.findIndex((s) => s.who === standby);
      assert.ok(firstOfStandby >= 10, `the standby took over (${JSON.stringify(started)})`);
      assert.ok(started.slice(firstOfStandby).every((s) => s.who === standby), 'and kept the rest');
      await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'all acked');
    });

    it('an existing main queue without the argument: the error says what to do', async () => {
      const ch = await broker.ch();
      await ch.assertQueue(names.mainQueue, { durable: true, arguments: { 'x-dead-letter-exchange': names.retryExchange } });
      await loadFlow([tab(), brokerNode(), configNode(names), consumerNode([[]], { mode: 'ordered' })]);
      await waitFor(() => statusText('consumer').includes('x-single-active-consumer'), 'the topology error');
      assert.match(
        statusText('consumer'),
        /queue '.+main-queue': x-single-active-consumer is none on the broker, config says .*true.*move its messages elsewhere, delete '.+main-queue' and redeploy, or use retry mode/,
      );
    });
  });
});
