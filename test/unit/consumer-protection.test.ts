/**
 * The consumer's side of issue 26, without a broker: which settles the kill switch counts, the rate
 * limit's holding (handed on in turn, back to the queue on a pause, forgotten with its channel), the
 * status lines and the circuit gauge.
 */
import assert from 'node:assert/strict';
import type { ConsumeMessage } from 'amqplib';
import { downstreamFailed, Throttle, type CircuitView, type Settled } from '../../src/lib/consume';
import { RetryMetrics } from '../../src/lib/observe/metrics';
import { sessionStatus, statsText } from '../../src/nodes/retry-consumer/consumer-status';

function settled(done: 'acked' | 'retried' | 'parked' | 'duplicate', kind?: Settled['kind']): Settled {
  return { outcome: { done, attempt: 1 }, reason: '', messageId: null, durationMs: 1, ...(kind ? { kind } : {}) };
}

describe('what the kill switch counts', () => {
  it('a transient failure counts as a failure, done and a plain ack as a success; permanent, parks and duplicates not at all', () => {
    assert.equal(downstreamFailed(settled('retried', 'transient')), true);
    assert.equal(downstreamFailed(settled('parked', 'transient')), true, 'a retry on its last attempt parks: still the downstream failing');
    assert.equal(downstreamFailed(settled('acked', 'done')), false);
    assert.equal(downstreamFailed(settled('parked', 'permanent')), undefined);
    assert.equal(downstreamFailed(settled('acked')), false);
    assert.equal(downstreamFailed(settled('retried')), true, 'without error rules a retry is transient');
    assert.equal(downstreamFailed(settled('parked')), undefined, 'park-publisher, an invalid body');
    assert.equal(downstreamFailed(settled('duplicate')), undefined);
  });
});

class FakeAcks {
  closed = false;
  readonly requeued: number[] = [];
  nack(message: ConsumeMessage, requeue: boolean): void {
    assert.equal(requeue, true);
    this.requeued.push(message.fields.deliveryTag);
  }
}

function delivery(acks: FakeAcks, tag: number): { acks: FakeAcks; message: ConsumeMessage } {
  return { acks, message: { fields: { deliveryTag: tag } } as unknown as ConsumeMessage };
}

describe('the rate limit (Throttle)', () => {
  it('hands the first on at once, holds the rest in order; a pause hands the held ones back to the queue', () => {
    const released: number[] = [];
    let now = 0;
    const throttle = new Throttle(2, (d: { message: ConsumeMessage }) => released.push(d.message.fields.deliveryTag), () => now);
    const acks = new FakeAcks();
    for (let tag = 1; tag <= 4; tag++) throttle.pass(delivery(acks, tag));
    assert.deepEqual(released, [1]);
    assert.equal(throttle.held, 3);
    now = 600; // 1.2 tokens
    throttle.requeue();
    assert.deepEqual(acks.requeued, [2, 3, 4]);
    assert.equal(throttle.held, 0);
  });

  it('forgets the held deliveries of a lost channel without touching it', () => {
    const throttle = new Throttle(1, () => undefined, () => 0);
    const acks = new FakeAcks();
    throttle.pass(delivery(acks, 1));
    throttle.pass(delivery(acks, 2));
    acks.closed = true;
    throttle.requeue();
    assert.deepEqual(acks.requeued, []);
    assert.equal(throttle.held, 0);
  });

  it('hands the held ones on as the bucket fills', async () => {
    const released: number[] = [];
    let now = 0;
    const throttle = new Throttle(1000, (d: { message: ConsumeMessage }) => released.push(d.message.fields.deliveryTag), () => now);
    const acks = new FakeAcks();
    for (let tag = 1; tag <= 3; tag++) throttle.pass(delivery(acks, tag));
    assert.deepEqual(released, [1]);
    now = 2; // two tokens by the clock: its timer hands both on
    for (let turns = 0; released.length < 3 && turns < 1000; turns++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(released, [1, 2, 3]);
    assert.equal(throttle.held, 0);
  });
});

describe('the consumer status with the kill switch and the rate limit', () => {
  const t = (key: string, args: Record<string, unknown> = {}): string => {
    const texts: Record<string, string> = {
      'retry-consumer.status.stats': '__duplicates__✓__acked__ ↻__retried__ ⚑__parked__ · __inFlight__ in flight',
      'retry-consumer.status.circuitOpen': 'circuit open · probe in __seconds__ s',
      'retry-consumer.status.circuitProbing': 'circuit probing · __probed__/__probes__',
      'retry-consumer.status.rateLimited': 'rate-limited · __rate__/s · ',
    };
    return (texts[key] ?? key).replace(/__(\w+)__/g, (_m, name: string) => String(args[name]));
  };
  const stats = { inFlight: 2, delivered: 5, acked: 3, retried: 0, parked: 0, duplicates: 0, waiting: 0 };
  const view = (state: CircuitView['state'], extra: Partial<CircuitView> = {}): CircuitView => ({ state, probeInMs: 0, probed: 0, probes: 5, ...extra });
  const context = { blockedBy: undefined, store: '', rateLimit: 0 };

  it('open: the seconds to the probe (yellow); probing: the successes so far (yellow)', () => {
    assert.deepEqual(sessionStatus({ phase: 'circuit-open' }, stats, t, { ...context, circuit: view('open', { probeInMs: 44_200 }) }), {
      fill: 'yellow',
      shape: 'ring',
      text: 'circuit open · probe in 45 s',
    });
    assert.deepEqual(sessionStatus({ phase: 'consuming' }, stats, t, { ...context, circuit: view('probing', { probed: 2 }) }), {
      fill: 'yellow',
      shape: 'dot',
      text: 'circuit probing · 2/5',
    });
    assert.equal(sessionStatus({ phase: 'consuming' }, stats, t, { ...context, circuit: view('closed') })?.fill, 'green');
  });

  it('says it holds messages back, before the counts, only while it does', () => {
    assert.equal(statsText({ ...stats, rateLimited: 4 }, t, 10), 'rate-limited · 10/s · ✓3 ↻0 ⚑0 · 2 in flight');
    assert.equal(statsText(stats, t, 10), '✓3 ↻0 ⚑0 · 2 in flight');
  });

  it("a store whose table is missing or wrong: a table problem, not a store down (red)", () => {
    const store = 'postgres app@db/test table "orders_dedupe"';
    const down = (storeProblem?: 'schema' | 'unreachable'): string | undefined =>
      sessionStatus({ phase: 'store-down', detail: 'why', ...(storeProblem ? { storeProblem } : {}) }, stats, t, { ...context, store, circuit: undefined })?.text;
    assert.equal(down('schema'), `retry-consumer.status.storeTable`);
    assert.equal(down('unreachable'), 'retry-consumer.status.storeDown');
    assert.equal(down(), 'retry-consumer.status.storeDown');
    assert.equal(sessionStatus({ phase: 'store-down', storeProblem: 'schema' }, stats, t, { ...context, store, circuit: undefined })?.fill, 'red');
  });
});

describe('the circuit gauge', () => {
  it('1 for the state now, 0 for the others, per consumer with the kill switch on', () => {
    const metrics = new RetryMetrics();
    let state: 'closed' | 'open' | 'probing' = 'open';
    metrics.addConsumer({ queue: 'orders', parkingQueue: 'orders.parking', inFlight: () => 0, depths: () => undefined, consumer: 'n1', circuit: () => state });
    metrics.addConsumer({ queue: 'orders', parkingQueue: 'orders.parking', inFlight: () => 0, depths: () => undefined });
    const lines = (): string[] => metrics.render().split('\n').filter((l) => l.startsWith('rabbitmq_retry_circuit_state{'));
    assert.deepEqual(lines(), [
      'rabbitmq_retry_circuit_state{queue="orders",consumer="n1",state="closed"} 0',
      'rabbitmq_retry_circuit_state{queue="orders",consumer="n1",state="open"} 1',
      'rabbitmq_retry_circuit_state{queue="orders",consumer="n1",state="probing"} 0',
    ]);
    state = 'probing';
    assert.ok(lines().includes('rabbitmq_retry_circuit_state{queue="orders",consumer="n1",state="probing"} 1'));
    assert.match(metrics.render(), /# TYPE rabbitmq_retry_circuit_state gauge/);
  });
});
