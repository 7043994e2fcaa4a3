/** Batch mode's msgs (issue 51): the batch msg's shape, and when a consumer's partial batch goes, without a broker. */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import type { ConsumerSession, SessionPhase } from '../../../../src/lib/consume';
import type { DeliveredMessage } from '../../../../src/lib/message';
import { batchOf } from '../../../../src/nodes/shared/batch-msg';
import type { NodeMessage } from '../../../../src/nodes/shared/node-red';
import { batchItem, startBatches, toBatchMsg } from '../../../../src/nodes/retry-consumer/batches';

function delivered(n: number, trace = false): DeliveredMessage {
  const retry = { attempt: 1, maxAttempts: 5, remaining: 4, firstDeathReason: null, deaths: [] };
  const d: DeliveredMessage = {
    payload: { n },
    amqp: { deliveryId: `d${n}`, config: 'cfg', queue: 'orders', exchange: 'x', routingKey: `rk.${n}`, redelivered: false, deliveryTag: n, consumerTag: 'ctag', properties: { messageId: `m${n}` }, headers: { h: n }, retry },
    retry,
  };
  if (trace) {
    d.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    d.tracestate = 'a=b';
  }
  return d;
}

describe('batchItem', () => {
  it('is the delivery\'s msg.amqp with its retry information', () => {
    const d = delivered(1);
    assert.deepEqual(batchItem(d), { ...d.amqp, retry: d.retry });
  });
  it('carries the deduplication record when the delivery has one', () => {
    const d = delivered(4);
    d.amqp.dedupe = { scope: 'orders', key: 'm4' };
    assert.deepEqual(batchItem(d), { ...d.amqp, retry: d.retry });
  });

  it('carries the trace context when the delivery has one', () => {
    const item = batchItem(delivered(2, true));
    assert.equal(item.traceparent, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    assert.equal(item.tracestate, 'a=b');
  });
  it('is the delivery\'s own msg.amqp, not a copy (one object less per item held)', () => {
    const d = delivered(3);
    assert.equal(batchItem(d), d.amqp);
  });
  it('gives every item the same hidden class (a spread copy plus retry made one per item: memory and GC of big batches)', () => {
    // V8's own check, allowed for the functions compiled from here on (the flag changes nothing else).
    setFlagsFromString('--allow-natives-syntax');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- %HaveSameMap is V8 syntax, not TypeScript
    const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
    const items = Array.from({ length: 50 }, (_, i) => batchItem(delivered(i + 1)));
    assert.equal(sameMap(items[10] as object, items[40] as object), true);
  });
});

describe('toBatchMsg', () => {
  const msg = toBatchMsg([delivered(1), delivered(2, true)], 'id1', 'cfg', 'orders');
  it('payload: the items\' payloads in order', () => {
    assert.deepEqual(msg.payload, [{ n: 1 }, { n: 2 }]);
  });
  it('msg.amqp: the configuration, the queue, the batch (id, size, not split) and the items', () => {
    const batch = batchOf(msg);
    assert.ok(batch);
    assert.deepEqual([batch.config, batch.queue, batch.batch], ['cfg', 'orders', { id: 'id1', size: 2, split: 0 }]);
    assert.deepEqual(batch.items.map((i) => i.deliveryId), ['d1', 'd2']);
    assert.equal(msg._msgid, 'id1');
  });
  it('no msg.retry, no msg.amqp.deliveryId, no trace context on the msg itself without a batch span', () => {
    assert.equal('retry' in msg, false);
    assert.equal('deliveryId' in (msg.amqp as object), false);
    assert.equal('traceparent' in msg, false);
  });
  it('the batch span\'s context as msg.traceparent / msg.tracestate', () => {
    const traced = toBatchMsg([delivered(1, true)], 'id2', 'cfg', 'orders', { traceparent: TRACEPARENT, tracestate: 'x=1' });
    assert.deepEqual([traced.traceparent, traced.tracestate], [TRACEPARENT, 'x=1']);
    assert.equal('tracestate' in toBatchMsg([delivered(1)], 'id3', 'cfg', 'orders', { traceparent: TRACEPARENT }), false);
  });
});

const TRACEPARENT = '00-11111111111111111111111111111111-2222222222222222-01';

class FakeSession extends EventEmitter {
  state: { phase: SessionPhase } = { phase: 'consuming' };
  circuit: { state: string } | undefined;
  ended = new Set<string>();
  trace: { traceparent: string } | undefined;
  deliveries = { live: (id: string) => !this.ended.has(id), traceBatch: () => this.trace };
  to(phase: SessionPhase): void {
    this.state = { phase };
    this.emit('state', this.state);
  }
}

function batches(size = 10): { session: FakeSession; sent: NodeMessage[]; b: ReturnType<typeof startBatches> } {
  const session = new FakeSession();
  const sent: NodeMessage[] = [];
  let n = 0;
  const b = startBatches(session as unknown as ConsumerSession, { size, waitMs: 60_000, config: 'cfg', queue: 'orders' }, (msg) => sent.push(msg), () => `b${++n}`);
  return { session, sent, b };
}

const ids = (msg: NodeMessage | undefined): string[] => batchOf(msg ?? {})?.items.map((i) => i.deliveryId) ?? [];

describe('startBatches', () => {
  // Each test stops its batches: a wait left armed would keep mocha running.
  it('sends a full batch as one msg', () => {
    const { b, sent } = batches(2);
    b.add(delivered(1));
    b.add(delivered(2));
    assert.deepEqual(sent.map(ids), [['d1', 'd2']]);
    b.stop();
  });

  it('puts the batch span\'s context on the msg', () => {
    const { b, sent, session } = batches(1);
    session.trace = { traceparent: TRACEPARENT };
    b.add(delivered(1));
    assert.equal(sent[0]?.traceparent, TRACEPARENT);
    b.stop();
  });

  it('holds a partial batch while consuming', () => {
    const { b, sent } = batches();
    b.add(delivered(1));
    assert.equal(sent.length, 0);
    b.stop();
  });

  for (const phase of ['paused', 'circuit-open', 'store-down'] as const) {
    it(`sends the partial batch at once when the consumer is ${phase}`, async () => {
      const { session, b, sent } = batches();
      b.add(delivered(1));
      session.to(phase);
      assert.deepEqual(sent.map(ids), [['d1']]);
      b.add(delivered(2)); // a straggler that arrives after the pause: looked at after the turn
      b.add(delivered(3));
      assert.deepEqual(sent.map(ids), [['d1']]);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(sent.map(ids), [['d1'], ['d2', 'd3']]);
      b.stop();
    });
  }

  it('holds what arrives in the turn the consumer resumes in (the deliveries come before the state says consuming)', async () => {
    const { session, b, sent } = batches();
    session.to('paused');
    b.add(delivered(1));
    session.to('consuming');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sent, []);
    b.stop();
  });

  it('sends the partial batch at once when the rate limit starts holding deliveries back', () => {
    const { session, b, sent } = batches();
    b.add(delivered(1));
    session.emit('holding');
    assert.deepEqual(sent.map(ids), [['d1']]);
    b.stop();
  });

  it('sends each delivery at once while the kill switch probes (one message at a time)', async () => {
    const { session, b, sent } = batches();
    session.circuit = { state: 'probing' };
    b.add(delivered(1));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sent.map(ids), [['d1']]);
    b.stop();
  });

  for (const phase of ['channel-lost', 'waiting-for-connection'] as const) {
    it(`drops the partial batch when the consumer is ${phase}: nothing sent, not even later`, () => {
      const { session, b, sent } = batches();
      b.add(delivered(1)); // not ended: dropped by the state alone
      session.to(phase);
      session.to('consuming');
      b.stop();
      assert.equal(sent.length, 0);
    });
  }

  it('leaves ended deliveries out of the batch they were in', () => {
    const { session, b, sent } = batches();
    b.add(delivered(1));
    b.add(delivered(2));
    session.ended.add('d1');
    session.to('paused');
    assert.deepEqual(sent.map(ids), [['d2']]);
    b.stop();
  });

  it('stop sends the partial batch and watches the session no more', () => {
    const { session, b, sent } = batches();
    b.add(delivered(1));
    b.stop();
    assert.deepEqual(sent.map(ids), [['d1']]);
    assert.equal(session.listenerCount('state') + session.listenerCount('holding'), 0);
  });

  it('gives each batch msg a new id', async () => {
    const { session, b, sent } = batches();
    b.add(delivered(1));
    session.to('paused');
    b.add(delivered(2));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sent.map((m) => batchOf(m)?.batch.id), ['b1', 'b2']);
    b.stop();
  });
});
