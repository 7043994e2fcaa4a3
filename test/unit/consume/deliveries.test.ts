/**
 * Deliveries without a broker, through their narrow parts: an ack channel that writes down what it is
 * told, a copy publisher that confirms or refuses. The settle deadline (one timer for the oldest), acks
 * at once, double settles, a confirmed copy before the ack, a failed copy handled in one place.
 */
import assert from 'node:assert/strict';
import type { ConsumeMessage } from 'amqplib';
import type { DeliveryDedupe } from '../../../src/lib/consume/admission';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Deliveries } from '../../../src/lib/consume/deliveries';
import { DedupeGate, MemoryDedupeStore } from '../../../src/lib/dedupe';
import { DeliveryRegistry } from '../../../src/lib/consume/registry';
import type { Settled } from '../../../src/lib/consume/types';
import type { DeliveredMessage } from '../../../src/lib/message';
import { AckBatcher, decisionPolicy, OrderedHold, Settler, SettleError, type SettleOutcome, type TrackedDelivery } from '../../../src/lib/settle';
import { openTelemetryTracer, type MessageTracer } from '../../../src/lib/trace';
import { FakeCopies, recordingChannel } from '../fixtures/settle-fakes';
import { consumerTopology } from '../fixtures/topology-seed';

const topology = consumerTopology;

function message(tag: number, headers: Record<string, unknown> = {}): ConsumeMessage {
  return {
    content: Buffer.from(`{"n":${tag}}`),
    fields: { deliveryTag: tag, redelivered: false, exchange: '', routingKey: 'q', consumerTag: 'ctag' },
    properties: { contentType: 'application/json', headers },
  } as unknown as ConsumeMessage;
}

const attempt1 = { attempt: 1, maxAttempts: 3, remaining: 2, firstDeathReason: null, deaths: [] };
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function setup(settleTimeoutMs: number, options: { ordered?: boolean; requeuePauseMs?: number; dedupe?: DeliveryDedupe; tracer?: MessageTracer } = {}) {
  const written: string[] = [];
  const channel = recordingChannel(written);
  const acks = new AckBatcher(channel);
  const copies = new FakeCopies();
  const hold = options.ordered ? new OrderedHold(10) : undefined;
  const deliveries = new Deliveries(new DeliveryRegistry<TrackedDelivery>('node1', 4), {
    configId: 'cfg',
    mainQueue: 'q',
    policy: decisionPolicy(topology, options.ordered === true),
    settler: new Settler(copies),
    hold,
    settleTimeoutMs,
    decode: 'auto',
    invalidBody: 'park',
    requeuePauseMs: options.requeuePauseMs ?? 1000,
    dedupe: options.dedupe,
    tracer: options.tracer,
  });
  const delivered: DeliveredMessage[] = [];
  const warnings: string[] = [];
  deliveries.on('message', (d) => delivered.push(d));
  deliveries.on('warning', (w) => warnings.push(w));
  const track = (tag: number, retry = attempt1, headers: Record<string, unknown> = {}): string => {
    deliveries.arrived(acks, message(tag, headers), retry, Date.now());
    return delivered.at(-1)!.amqp.deliveryId;
  };
  return { written, deliveries, delivered, warnings, track, acks, copies, hold };
}

/** Deduplication by the body's `key` in a memory store, with a lease far longer than any test: a copy that moves did not wait for it. */
function dedupe(): { gate: DedupeGate; store: MemoryDedupeStore; options: DeliveryDedupe } {
  const store = new MemoryDedupeStore();
  const gate = new DedupeGate({ store, scope: 'q', leaseMs: 3_600_000, retentionMs: 3_600_000, storeDown: 'pause' });
  const keyOf = (d: DeliveredMessage) => ({ key: (d.payload as { key: string }).key });
  return { gate, store, options: { gate, keyOf, noKey: 'process', maxKeyBytes: 4096, scope: 'q' } };
}

function keyed(tag: number, key: string): ConsumeMessage {
  return { ...message(tag), content: Buffer.from(JSON.stringify({ key })) };
}

async function until(what: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !what(); i += 1) await sleep(5);
  assert.ok(what(), 'never happened');
}

describe('deliveries', () => {
  it('an ack settles at once: the outcome is there before any other turn, the ack written at the end of it', async () => {
    const { written, deliveries, track } = setup(0);
    const a = track(1);
    track(2);
    let outcome: unknown;
    void deliveries.settle(a, 'ack').then((o) => (outcome = o));
    await Promise.resolve();
    assert.deepEqual(outcome, { done: 'acked', attempt: 1 });
    assert.equal(deliveries.inFlight, 1);
    await nextTurn();
    assert.deepEqual(written, ['ack 1+']);
  });

  it('a second settle is told how the first ended; an id it never gave out is unknown', async () => {
    const { deliveries, track } = setup(0);
    const a = track(1);
    await deliveries.settle(a, 'retry');
    await assert.rejects(deliveries.settle(a, 'ack'), (err: SettleError) => err.kind === 'already-settled' && /already settled \(retried\)/.test(err.message));
    await assert.rejects(deliveries.settle('node1:99', 'ack'), (err: SettleError) => err.kind === 'unknown');
    await assert.rejects(deliveries.settle('other:1', 'ack'), (err: SettleError) => err.kind === 'unknown');
  });

  it('live: a delivery waiting to be settled; not once settled or ended with its channel, nor an id never given out (batch mode leaves those out)', async () => {
    const { deliveries, track } = setup(0);
    const a = track(1);
    const b = track(2);
    assert.deepEqual([deliveries.live(a), deliveries.live(b)], [true, true]);
    await deliveries.settle(a, 'ack');
    deliveries.endAll('channel lost');
    assert.deepEqual([deliveries.live(a), deliveries.live(b), deliveries.live('node1:99'), deliveries.live('other:1')], [false, false, false, false]);
  });

  it('together (a batch\'s settles in one loop): one changed event at its end, each settle still counted and reported', async () => {
    const { written, deliveries, track } = setup(0);
    const ids = [track(1), track(2), track(3), track(4)];
    const changes: number[] = [];
    const settled: string[] = [];
    deliveries.on('changed', () => changes.push(deliveries.inFlight));
    deliveries.on('settled', (s) => settled.push(s.outcome.done));
    const outcomes = deliveries.settles.together(() => ids.slice(0, 3).map((id) => deliveries.settleNow(id, 'ack', '', undefined, undefined, () => undefined)));
    assert.deepEqual(outcomes, [1, 1, 1].map((attempt) => ({ done: 'acked', attempt })));
    assert.deepEqual(changes, [1], 'one changed, once the three are settled');
    assert.deepEqual(settled, ['acked', 'acked', 'acked']);
    assert.equal(deliveries.counters.acked, 3);
    deliveries.settleNow(ids[3] as string, 'ack', '', undefined, undefined, () => undefined);
    assert.deepEqual(changes, [1, 0], 'outside together: one per settle again');
    await nextTurn();
    assert.deepEqual(written, ['ack 4+'], 'the four acks in one multiple frame');
  });

  it('settleNow (the settle nodes\' path): an ack or a dead-letter returns its outcome itself, a copy undefined and its outcome through the callback; one that cannot settle throws', async () => {
    const { written, deliveries, track, copies } = setup(0);
    const a = track(1);
    const b = track(2);
    const c = track(3);
    const results: (SettleOutcome | Error)[] = [];
    const ids: string[] = [];
    const later = (result: SettleOutcome | Error, id: string): void => {
      results.push(result);
      ids.push(id);
    };
    assert.deepEqual(deliveries.settleNow(a, 'ack', '', undefined, undefined, later), { done: 'acked', attempt: 1 });
    assert.deepEqual(deliveries.settleNow(b, 'retry', '', undefined, undefined, later), { done: 'retried', attempt: 1 }); // a dead-letter retry: no copy
    assert.equal(deliveries.settleNow(c, 'park', 'bad', undefined, undefined, later), undefined, 'a park waits for its confirmed copy');
    assert.deepEqual(results, [], 'not called before settleNow returns');
    for (let i = 0; i < 100 && results.length === 0; i += 1) await nextTurn();
    assert.equal(results.length, 1);
    const parked: unknown = results[0];
    assert.equal((parked as SettleOutcome).done, 'parked');
    assert.deepEqual(ids, [c]);
    assert.deepEqual(copies.published.map((p) => p.queue), ['q.parking']);
    assert.throws(() => deliveries.settleNow(a, 'ack', '', undefined, undefined, later), (err: SettleError) => err.kind === 'already-settled');
    assert.throws(() => deliveries.settleNow('node1:99', 'retry', '', undefined, undefined, later), (err: SettleError) => err.kind === 'unknown');
    await nextTurn();
    // The dead-letter is a reject of its own; the acks of 1 and 3 one multiple frame after it (2 is settled already).
    assert.deepEqual(written, ['reject 2', 'ack 3+']);
  });

  it('settle timeout: each unsettled delivery is retried once its own time is up, oldest first; settled ones are left alone', async () => {
    const { written, deliveries, warnings, track } = setup(40);
    const a = track(1);
    await sleep(20);
    track(2);
    track(3);
    await deliveries.settle(a, 'ack');
    await nextTurn();
    assert.deepEqual(written, ['ack 1+']);
    // 1 was acked; 2 and 3 are due about 40 ms after they arrived, both in one expiry.
    for (let i = 0; i < 100 && deliveries.inFlight > 0; i += 1) await sleep(10);
    assert.equal(deliveries.inFlight, 0);
    // Both due in one expiry: a dead-letter is one reject per message (RabbitMQ 4.3 counts a reject, not a nack).
    assert.deepEqual(written, ['ack 1+', 'reject 2', 'reject 3']);
    assert.equal(warnings.filter((w) => /not settled within 0.04 s: sent to retry/.test(w)).length, 2);
  });

  it('settle timeout: a delivery that arrives after the timer went quiet arms it again', async () => {
    const { written, deliveries, track } = setup(20);
    track(1);
    for (let i = 0; i < 100 && deliveries.inFlight > 0; i += 1) await sleep(10);
    track(2);
    for (let i = 0; i < 100 && deliveries.inFlight > 0; i += 1) await sleep(10);
    assert.deepEqual(written, ['reject 1', 'reject 2']);
  });

  it('the kind travels with the settle: onto the settled event and the park header; the settle timeout is transient, a plain ack has none', async () => {
    const { deliveries, track, copies } = setup(30);
    const settled: Settled[] = [];
    deliveries.on('settled', (e) => settled.push(e));
    const permanent = track(1);
    const done = track(2);
    const plain = track(3);
    assert.equal((await deliveries.settle(permanent, 'retry', 'permanent (client error): HTTP 400', undefined, 'permanent')).done, 'parked');
    assert.deepEqual(deliveries.settleNow(done, 'ack', '', undefined, 'done', () => undefined), { done: 'acked', attempt: 1 });
    await deliveries.settle(plain, 'ack');
    track(4); // left to the settle timeout
    for (let i = 0; i < 100 && deliveries.inFlight > 0; i += 1) await sleep(10);
    assert.deepEqual(
      settled.map((e) => [e.outcome.done, e.kind]),
      [
        ['parked', 'permanent'],
        ['acked', 'done'],
        ['acked', undefined],
        ['retried', 'transient'],
      ],
    );
    assert.deepEqual(copies.published.map((p) => [p.headers['park-reason'], p.headers['park-error-kind'], p.headers['retry-attempt']]), [['permanent (client error): HTTP 400', 'permanent', 1]]);
  });

  it('a park is a confirmed copy first, the ack only after it, counted once', async () => {
    const { written, deliveries, track, copies } = setup(0);
    const a = track(1);
    track(2);
    const outcome = await deliveries.settle(a, 'park', 'bad amount');
    assert.deepEqual(copies.published.map((p) => [p.queue, p.headers['park-reason']]), [['q.parking', 'bad amount']]);
    assert.equal(outcome.done, 'parked');
    assert.equal(deliveries.counters.parked, 1);
    assert.equal(deliveries.copying, 0);
    await nextTurn();
    assert.deepEqual(written, ['ack 1+']);
  });

  it('a failed copy is handled in one place: not acked, the settle told why, a later settle told it is stale, the message back to the queue after the pause', async () => {
    const { written, deliveries, track, copies } = setup(0, { requeuePauseMs: 20 });
    const a = track(1);
    copies.refuse = 'exchange gone';
    const changes: number[] = [];
    deliveries.on('changed', () => changes.push(deliveries.copying));
    await assert.rejects(deliveries.settle(a, 'park'), (err: SettleError) => err.kind === 'broker' && /could not park message .* in 'q.parking': exchange gone; it goes back to 'q' after a pause/.test(err.message));
    assert.equal(deliveries.counters.parked, 0);
    assert.equal(deliveries.copying, 0);
    assert.deepEqual(changes, [0], 'a waiting drain is told once the copy is no longer in flight');
    await assert.rejects(deliveries.settle(a, 'ack'), (err: SettleError) => err.kind === 'stale' && /parking failed/.test(err.message));
    assert.deepEqual(written, []);
    for (let i = 0; i < 100 && written.length === 0; i += 1) await sleep(5);
    assert.deepEqual(written, ['reject 1 requeue'], 'a failed copy is the message failing: a reject, counted on every version');
  });

  it('a copy whose channel went away before the confirm is stale and not requeued (the broker has it)', async () => {
    const { written, deliveries, track, acks } = setup(0, { requeuePauseMs: 5 });
    const a = track(1);
    const settling = deliveries.settle(a, 'park');
    acks.close();
    await assert.rejects(settling, (err: SettleError) => err.kind === 'stale' && /copied to 'q.parking', but its channel was lost before the ack/.test(err.message));
    await sleep(20);
    assert.deepEqual(written, []);
  });

  it('an ack on a channel that is gone is stale, and says which attempt will be repeated', async () => {
    const { deliveries, track, acks } = setup(0);
    const a = track(1);
    acks.close();
    await assert.rejects(deliveries.settle(a, 'ack'), (err: SettleError) => err.kind === 'stale' && /attempt 1 will be repeated/.test(err.message));
  });

  it('a body that does not decode is parked on arrival with the reason, never passed on', async () => {
    const { deliveries, delivered, copies } = setup(0);
    const bad = { ...message(1), content: Buffer.from('{not json') } as ConsumeMessage;
    const acks = new AckBatcher({ ack: () => undefined, nack: () => undefined, reject: () => undefined, nackAll: () => undefined });
    deliveries.arrived(acks, bad, attempt1, Date.now());
    for (let i = 0; i < 50 && copies.published.length === 0; i += 1) await nextTurn();
    assert.equal(delivered.length, 0);
    assert.match(String(copies.published[0]?.headers['park-reason']), /body is not valid JSON/);
  });

  it('ordered: a retry holds the message and runs it through the flow again as the next attempt, until it is acked', async () => {
    const { deliveries, delivered, track, hold, written } = setup(0, { ordered: true });
    const blocked: string[] = [];
    hold?.on('blocked', (why) => blocked.push(why));
    hold?.on('released', () => blocked.push('released'));
    const first = track(1);
    await deliveries.settle(first, 'retry', 'not yet');
    assert.match(blocked[0] ?? '', /^blocked since .*, attempt 1: not yet$/);
    for (let i = 0; i < 100 && delivered.length < 2; i += 1) await sleep(5);
    assert.equal(delivered[1]?.retry.attempt, 2);
    await deliveries.settle(delivered[1].amqp.deliveryId, 'ack');
    assert.equal(blocked.at(-1), 'released');
    await nextTurn();
    assert.deepEqual(written, ['ack 1+'], 'the one held delivery, acked once');
  });

  describe('deduplicated deliveries and the settle timeout (issue 28)', () => {
    it('a delivery the flow never settles: the settle timeout retries it and releases its key, so a copy waiting on it is processed (not after the lease)', async () => {
      const d = dedupe();
      const { deliveries, delivered, acks } = setup(30, { dedupe: d.options });
      const events: string[] = [];
      deliveries.on('message', (m) => events.push(`message ${m.amqp.deliveryTag}`));
      deliveries.on('settled', (s) => events.push(s.outcome.done));
      deliveries.arrived(acks, keyed(1, 'pay-1'), attempt1, Date.now());
      await until(() => delivered.length === 1);
      deliveries.arrived(acks, keyed(2, 'pay-1'), attempt1, Date.now()); // the second copy: waits for the first
      await until(() => delivered.length === 2);
      assert.deepEqual(events.slice(0, 3), ['message 1', 'retried', 'message 2'], 'the copy entered the flow once the first was retried');
      assert.equal(deliveries.counters.duplicates, 0);
      await d.gate.close();
    });

    it("a delivery whose channel was lost: its key stays claimed for a late ack, and is released at its settle deadline, so the redelivered copy is processed (not after the lease)", async () => {
      const d = dedupe();
      const { deliveries, delivered, acks, warnings } = setup(200, { dedupe: d.options });
      const events: string[] = [];
      deliveries.on('message', (m) => events.push(`message ${m.amqp.deliveryTag}`));
      deliveries.on('warning', (w) => events.push(w.replace(/^message \S+ /, 'message ')));
      deliveries.arrived(acks, keyed(1, 'pay-2'), attempt1, Date.now());
      await until(() => delivered.length === 1);
      acks.close();
      assert.equal(deliveries.endAll('its channel was lost'), 1);
      deliveries.channelBack(); // the consumer has a channel again: deadlines run (none while it is gone)
      const again = new AckBatcher({ ack: () => undefined, nack: () => undefined, reject: () => undefined, nackAll: () => undefined });
      deliveries.arrived(again, keyed(7, 'pay-2'), attempt1, Date.now()); // the broker redelivers it
      await sleep(5);
      assert.equal(delivered.length, 1, 'the redelivery waits while the flow may still finish the first');
      await until(() => delivered.length === 2);
      assert.deepEqual(events, [
        'message 1',
        'message was not settled within 0.2 s (its channel was lost before): its deduplication key is released',
        'message 7',
      ]);
      assert.equal(warnings.length, 1);
      await d.gate.close();
    });

    it('a late ack of a lost channel\'s delivery still records its key; a late retry after its deadline releases nothing', async () => {
      const d = dedupe();
      const { deliveries, delivered, acks } = setup(200, { dedupe: d.options });
      deliveries.arrived(acks, keyed(1, 'late-ack'), attempt1, Date.now());
      deliveries.arrived(acks, keyed(2, 'late-retry'), attempt1, Date.now());
      await until(() => delivered.length === 2);
      const [ackId, retryId] = delivered.map((m) => m.amqp.deliveryId);
      acks.close();
      deliveries.endAll('its channel was lost');
      deliveries.channelBack();
      await assert.rejects(deliveries.settle(ackId!, 'ack'));
      await nextTurn();
      await nextTurn();
      assert.deepEqual(await d.store.claim([{ scope: 'q', key: 'late-ack' }], 'someone else', 1000), [{ state: 'done' }], 'recorded: the effect was done');
      // late-retry's deadline passes: released; the redelivery takes it; a late retry of the old one must not release it under the new one.
      const again = new AckBatcher({ ack: () => undefined, nack: () => undefined, reject: () => undefined, nackAll: () => undefined });
      deliveries.arrived(again, keyed(9, 'late-retry'), attempt1, Date.now());
      await until(() => delivered.length === 3);
      await assert.rejects(deliveries.settle(retryId!, 'retry'));
      await nextTurn();
      await nextTurn();
      const held = await d.store.claim([{ scope: 'q', key: 'late-retry' }], 'someone else', 1000);
      assert.equal(held[0]?.state, 'held', "the redelivery's claim stays");
      await d.gate.close();
    });
  });

  it('ordered: a stopping consumer does not run a held message again', async () => {
    const { deliveries, delivered, track } = setup(0, { ordered: true });
    await deliveries.settle(track(1), 'retry');
    deliveries.stop();
    await sleep(40);
    assert.equal(delivered.length, 1);
  });

  describe('trace context and spans', () => {
    const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    let spans: InMemorySpanExporter;
    let tracer: MessageTracer;
    beforeEach(() => {
      spans = new InMemorySpanExporter();
      trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
      tracer = openTelemetryTracer()!;
    });
    afterEach(() => trace.disable());

    it('without a tracer the delivery\'s trace context goes to the flow as it is, and none when it has none', () => {
      const { delivered, track } = setup(0);
      track(1, attempt1, { traceparent: Buffer.from(TP), tracestate: 'a=1' });
      track(2, attempt1, { traceparent: 'not one' });
      track(3);
      assert.deepEqual(delivered.map((d) => [d.traceparent, d.tracestate]), [[TP, 'a=1'], [undefined, undefined], [undefined, undefined]]);
      assert.equal(spans.getFinishedSpans().length, 0);
    });

    it('an ack: process and settle spans, the outcome on the settle span; the flow gets the process span\'s context', async () => {
      const { delivered, deliveries, track } = setup(0, { tracer });
      const a = track(1, attempt1, { traceparent: TP });
      await deliveries.settle(a, 'ack');
      const [settle, process] = spans.getFinishedSpans();
      assert.equal(process?.name, 'process q');
      assert.equal(process?.parentSpanContext?.spanId, '00f067aa0ba902b7');
      assert.equal(delivered[0]?.traceparent, `00-4bf92f3577b34da6a3ce929d0e0e4736-${process?.spanContext().spanId}-01`);
      assert.equal(settle?.name, 'settle q');
      assert.equal(settle?.parentSpanContext?.spanId, process?.spanContext().spanId);
      assert.equal(settle?.attributes['rabbitmq_retry.outcome'], 'acked');
      assert.equal(settle?.attributes['rabbitmq_retry.decision'], 'ack');
    });

    it('a park: the copy carries its park span\'s context', async () => {
      const { deliveries, track, copies } = setup(0, { tracer });
      await deliveries.settle(track(1, attempt1, { traceparent: TP }), 'park', 'bad');
      const park = spans.getFinishedSpans().find((s) => s.name === 'park q.parking');
      assert.ok(park);
      assert.equal(copies.published[0]?.headers.traceparent, `00-4bf92f3577b34da6a3ce929d0e0e4736-${park.spanContext().spanId}-01`);
    });

    it('a batch: its span\'s context (delivery-spans.test.ts has the span itself); it ends with the last item', async () => {
      const { deliveries, delivered, track } = setup(0, { tracer });
      const a = track(1);
      track(2);
      const context = deliveries.traceBatch(delivered);
      await deliveries.settle(a, 'ack');
      assert.equal(spans.getFinishedSpans().filter((s) => s.name === 'batch q').length, 0);
      deliveries.endAll('channel closed');
      const batch = spans.getFinishedSpans().find((s) => s.name === 'batch q');
      assert.equal(context?.traceparent, `00-${batch?.spanContext().traceId}-${batch?.spanContext().spanId}-01`);
      assert.equal(batch?.links.length, 2);
    });

    it('a batch without a tracer: no span, no context', () => {
      const { deliveries, delivered, track } = setup(0);
      track(1);
      track(2);
      assert.equal(deliveries.traceBatch(delivered), undefined);
    });

    it('a failed copy and a lost channel end the spans failed', async () => {
      const { deliveries, track, copies } = setup(0, { tracer, requeuePauseMs: 5 });
      const a = track(1);
      track(2);
      copies.refuse = 'exchange gone';
      await assert.rejects(deliveries.settle(a, 'park'));
      const park = spans.getFinishedSpans().find((s) => s.name === 'park q.parking');
      assert.equal(park?.status.code, SpanStatusCode.ERROR);
      assert.equal(park?.attributes['error.type'], 'broker');
      assert.equal(spans.getFinishedSpans().filter((s) => s.name === 'process q').length, 1);
      deliveries.endAll('channel closed');
      const processes = spans.getFinishedSpans().filter((s) => s.name === 'process q');
      assert.equal(processes.length, 2);
      assert.equal(processes[1]?.status.code, SpanStatusCode.ERROR);
      assert.equal(processes[1]?.status.message, 'not settled: channel closed');
    });
  });
});
