/** The shipped example flow (examples/flows.json) in the test-helper runtime, on the real broker. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AMQP_URL, Broker, uniqueName, waitFor } from '../helpers/broker';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;
const SEED_NAMES = ['main-exchange', 'main-queue', 'retry-exchange', 'retry-queue', 'parking-queue', 'reply-queue'];

/** The example with every seed name made unique (and a short TTL), so runs never collide. */
export function exampleFlowWithNames(prefix: string): { flow: Array<Record<string, any>>; names: Record<string, string> } {
  const base = uniqueName(prefix);
  const names = Object.fromEntries(SEED_NAMES.map((n) => [n, `${base}.${n}`]));
  let text = readFileSync(path.resolve(__dirname, '../../examples/flows.json'), 'utf8');
  // Longest names first is not needed: no seed name contains another followed by a quote.
  for (const n of SEED_NAMES) text = text.split(n).join(names[n]);
  const flow = JSON.parse(text) as Array<Record<string, any>>;
  for (const node of flow) if (node.type === 'retry-config') node.retryDelay = '500';
  return { flow, names };
}

describe('example flow in the Node-RED runtime (real broker)', function () {
  let broker: Broker;

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  it('acks and answers good payments, retries the poison payment 3 times and parks it', async () => {
    broker = await Broker.open();
    const { flow, names } = exampleFlowWithNames('example');
    broker.track('queue', names['main-queue']!, names['retry-queue']!, names['parking-queue']!, names['reply-queue']!);
    broker.track('exchange', names['main-exchange']!, names['retry-exchange']!);
    const brokerConfig = flow.find((n) => n.type === 'retry-broker')!;
    brokerConfig.url = AMQP_URL;
    const consumer = flow.find((n) => n.type === 'retry-consumer')!;
    consumer.wires[0].push('capture');
    flow.push({ id: 'capture', type: 'helper', z: consumer.z });
    await loadFlow(flow);
    const seen: Msg[] = [];
    helper.getNode('capture').on('input', (m: Msg) => seen.push(m));
    await broker.waitForConsumer(names['main-queue']!);

    const inject = (name: string) => helper.getNode(flow.find((n) => n.type === 'inject' && n.name === name)!.id).receive({});
    inject('publish good payment');
    inject('publish good payment');
    inject('publish poison payment');

    await waitFor(async () => (await broker.messageCount(names['parking-queue']!)) === 1, 'the poison payment parked');
    await waitFor(async () => (await broker.messageCount(names['reply-queue']!)) === 2, 'two replies');
    const replies = [await broker.take(names['reply-queue']!), await broker.take(names['reply-queue']!)];
    for (const r of replies) {
      assert.deepEqual(JSON.parse(r.content.toString()), { status: 'ok' });
      assert.match(String(r.properties.correlationId), /^good-/);
    }
    const parked = await broker.take(names['parking-queue']!);
    assert.equal(JSON.parse(parked.content.toString()).amount, 210.23);
    assert.match(String(parked.properties.headers?.['park-reason']), /^max attempts \(3\) reached; last error: amount 210.23 is over the 100.00 limit$/);
    const poison = seen.filter((m) => m.payload.amount === 210.23);
    assert.deepEqual(poison.map((m) => m.retry.attempt), [1, 2, 3]);
    assert.equal(seen.filter((m) => m.payload.amount === 10.23).length, 2);
    await waitFor(async () => (await broker.messageCount(names['main-queue']!)) === 0 && (await broker.messageCount(names['retry-queue']!)) === 0, 'main and retry queues empty');
  });
});
