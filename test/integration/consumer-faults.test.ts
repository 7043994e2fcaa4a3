/**
 * Consumer faults a new user runs into (issue 7), in the Node-RED runtime against the real broker:
 * bodies in other charsets, number fields deployed without the editor.
 */
import assert from 'node:assert/strict';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { errorsOf, helper, lastStatus, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

describe('consumer faults (real broker)', function () {
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('faults');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** consumer → ack, capturing what the consumer sends and the texts it logs. */
  async function loadAckFlow(options: { consumer?: Record<string, unknown>; config?: Record<string, unknown>; broker?: Record<string, unknown> } = {}) {
    await loadFlow([
      tab(),
      brokerNode(options.broker),
      configNode(names, options.config),
      consumerNode([['ack', 'seen']], options.consumer),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    return seen;
  }

  describe('charset', () => {
    it('decodes a latin1 body as latin1', async () => {
      const seen = await loadAckFlow();
      await broker.waitForConsumer(names.mainQueue);
      await broker.publish(names.mainExchange, names.routingKey, Buffer.from('café crème', 'latin1'), { contentType: 'text/plain; charset=iso-8859-1' });
      await waitFor(() => seen.length === 1, 'the message');
      assert.equal(seen[0]!.payload, 'café crème');
      await waitFor(async () => (await broker.messageCount(names.mainQueue)) === 0, 'the ack');
    });

    it('parks a body that is not valid in its charset, with the reason, bytes unchanged', async () => {
      const seen = await loadAckFlow();
      await broker.waitForConsumer(names.mainQueue);
      const body = Buffer.from('café crème', 'latin1');
      await broker.publish(names.mainExchange, names.routingKey, body, { contentType: 'text/plain; charset=utf-8' });
      const parked = await broker.take(names.parkingQueue);
      assert.equal(parked.properties.headers?.['park-reason'], 'body is not valid utf-8');
      assert.deepEqual(parked.content, body);
      assert.equal(seen.length, 0);
    });
  });

  describe('number fields deployed without the editor', () => {
    it('refuses prefetch 0 with a red status naming the field, and does not consume', async () => {
      await loadAckFlow({ consumer: { prefetch: '0' } });
      assert.deepEqual(lastStatus('consumer'), { fill: 'red', shape: 'ring', text: "prefetch is '0': must be a whole number from 1 to 65535" });
      assert.equal(errorsOf('consumer').at(-1), "retry consumer not started: prefetch is '0': must be a whole number from 1 to 65535");
      assert.equal(await broker.consumerCount(names.mainQueue), 0);
    });

    it('refuses max attempts "abc" on the retry config, shown on the consumer', async () => {
      await loadAckFlow({ config: { maxAttempts: 'abc' } });
      assert.deepEqual(lastStatus('consumer'), { fill: 'red', shape: 'ring', text: "max attempts is 'abc': must be a whole number of at least 1" });
    });

    it('refuses a broker port that is not a port', async () => {
      await loadAckFlow({ broker: { url: '', host: '127.0.0.1', port: 'abc' } });
      assert.ok(errorsOf('broker').some((e) => e.includes("port is 'abc': must be a whole number from 1 to 65535")));
    });
  });
});
