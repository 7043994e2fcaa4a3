/**
 * Trace context across the hops of one message (issue 27): W3C `traceparent` on every copy the
 * package makes, and — with an OpenTelemetry SDK registered — the spans of publish, consume, settle,
 * retry, park and replay in one trace. The SDK's in-memory exporter, registered globally for a test
 * and unregistered after; without it nothing is recorded and the trace context still travels.
 */
import assert from 'node:assert/strict';
import { SpanKind, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const GIVEN = `00-${TRACE}-00f067aa0ba902b7-01`;
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

describe('trace context across retries, parking and replay (real broker)', function () {
  let broker: Broker;
  let names: Names;
  let exporter: InMemorySpanExporter | undefined;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('trace');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue, `${names.retryQueue}.100ms`, `${names.retryQueue}.200ms`);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    trace.disable();
    exporter = undefined;
    await broker.cleanup();
  });

  /** The in-memory exporter, registered globally before the flow starts (nodes look for a tracer provider when they start). */
  function recordSpans(): InMemorySpanExporter {
    exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    return exporter;
  }

  /** publish node → main exchange; consumer → every delivery retried (max attempts 2: parked on the second); a replay node. */
  async function loadRetryFlow(config: Record<string, unknown>): Promise<{ seen: Msg[]; published: Msg[] }> {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names, { maxAttempts: '2', ...config }),
      { id: 'pub', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', exchange: names.mainExchange, routingKey: names.routingKey, persistent: true, wires: [['published']] },
      { id: 'published', type: 'helper', z: 'flow' },
      consumerNode([['retry', 'seen']]),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
      { id: 'replay', type: 'park-replay', z: 'flow', config: 'config', action: 'replay', max: '10', resetAttempts: true, wires: [[]] },
    ]);
    const seen: Msg[] = [];
    const published: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    helper.getNode('published').on('input', (msg: Msg) => published.push(msg));
    await broker.waitForConsumer(names.mainQueue);
    return { seen, published };
  }

  /** The spans of one trace as a chain from its root, each followed by its children in the order they started. */
  function chain(spans: ReadableSpan[], root: ReadableSpan): ReadableSpan[] {
    const children = spans.filter((s) => s.parentSpanContext?.spanId === root.spanContext().spanId);
    return [root, ...children.flatMap((child) => chain(spans, child))];
  }

  it('publish → consume → retry → consume → park are spans of one trace, parented hop by hop', async () => {
    const spans = recordSpans();
    // Backoff tiers: a retry is a copy in a tier queue (with a span of its own).
    const { seen, published } = await loadRetryFlow({ retryDelay: '100ms, 200ms', retryExchange: '' });
    helper.getNode('pub').receive({ payload: { n: 1 }, traceparent: GIVEN, tracestate: 'shop=1' });

    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked after its second attempt');
    await waitFor(() => spans.getFinishedSpans().some((s) => s.name.startsWith('park ')), 'the park span ended');

    const all = spans.getFinishedSpans().filter((s) => s.instrumentationScope.name === 'node-red-contrib-rabbitmq-retry');
    assert.deepEqual([...new Set(all.map((s) => s.spanContext().traceId))], [TRACE], 'every span in the trace the msg named');
    const root = all.find((s) => s.name === `publish ${names.mainExchange}`);
    assert.ok(root, all.map((s) => s.name).join(', '));
    assert.equal(root.parentSpanContext?.spanId, '00f067aa0ba902b7', 'the publish span a child of msg.traceparent');
    assert.deepEqual(
      chain(all, root).map((s) => s.name),
      [
        `publish ${names.mainExchange}`,
        `process ${names.mainQueue}`,
        `settle ${names.mainQueue}`,
        `retry ${names.retryQueue}.100ms`,
        `process ${names.mainQueue}`,
        `settle ${names.mainQueue}`,
        `park ${names.parkingQueue}`,
      ],
    );
    const [publish, process1, settle1, retry, process2, settle2, park] = chain(all, root) as [ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan];
    assert.equal(publish.kind, SpanKind.PRODUCER);
    assert.deepEqual(
      { ...publish.attributes },
      {
        'messaging.system': 'rabbitmq',
        'messaging.operation.name': 'publish',
        'messaging.operation.type': 'send',
        'messaging.destination.name': names.mainExchange,
        'messaging.rabbitmq.destination.routing_key': names.routingKey,
        'messaging.message.id': published[0]?.amqp.published.messageId,
        'messaging.message.body.size': 7,
      },
    );
    assert.equal(process1.kind, SpanKind.CONSUMER);
    assert.equal(process1.attributes['messaging.operation.type'], 'process');
    assert.equal(process1.attributes['messaging.destination.name'], names.mainQueue);
    assert.equal(process1.attributes['rabbitmq_retry.attempt'], 1);
    assert.equal(process2.attributes['rabbitmq_retry.attempt'], 2);
    assert.equal(process2.attributes['messaging.rabbitmq.destination.routing_key'], names.routingKey, 'the original routing key, not the retry route\'s');
    assert.equal(settle1.kind, SpanKind.CLIENT);
    assert.equal(settle1.attributes['messaging.operation.type'], 'settle');
    assert.equal(settle1.attributes['rabbitmq_retry.outcome'], 'retried');
    assert.equal(settle2.attributes['rabbitmq_retry.outcome'], 'parked');
    assert.match(String(settle2.attributes['rabbitmq_retry.park_reason']), /^max attempts \(2\) reached/);
    assert.equal(retry.attributes['messaging.operation.type'], 'send');
    assert.equal(retry.attributes['messaging.rabbitmq.destination.routing_key'], `${names.retryQueue}.100ms`);
    assert.equal(park.kind, SpanKind.PRODUCER);
    assert.equal(park.attributes['messaging.operation.name'], 'park');
    assert.equal(park.attributes['messaging.destination.name'], 'amq.default');

    // What the flow saw and what the broker holds carry the spans' contexts.
    assert.deepEqual(seen.map((m) => m.retry.attempt), [1, 2]);
    assert.equal(seen[0]?.traceparent, `00-${TRACE}-${process1.spanContext().spanId}-01`, 'msg.traceparent: the process span');
    assert.equal(seen[0]?.tracestate, 'shop=1');
    assert.equal(seen[0]?.amqp.headers.traceparent, `00-${TRACE}-${publish.spanContext().spanId}-01`, 'msg.amqp.headers: as published');
    assert.equal(seen[1]?.amqp.headers.traceparent, `00-${TRACE}-${retry.spanContext().spanId}-01`, 'the retry copy carries its send');
    const parked = await broker.take(names.parkingQueue);
    assert.equal(String(parked.properties.headers?.traceparent), `00-${TRACE}-${park.spanContext().spanId}-01`);
    assert.equal(String(parked.properties.headers?.tracestate), 'shop=1');
  });

  it('a replayed message goes on in its trace: a replay span, then the next consume', async () => {
    const spans = recordSpans();
    const { seen } = await loadRetryFlow({ retryDelay: '100', maxAttempts: '1' });
    await broker.publish(names.mainExchange, names.routingKey, { n: 2 }, { messageId: 'replay-me', headers: { traceparent: GIVEN } });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked');
    helper.getNode('replay').receive({});
    await waitFor(() => seen.length === 2, 'the replayed message consumed again');
    await waitFor(() => spans.getFinishedSpans().filter((s) => s.name.startsWith('park ')).length === 2, 'parked again');

    const all = spans.getFinishedSpans();
    assert.deepEqual([...new Set(all.map((s) => s.spanContext().traceId))], [TRACE]);
    const replay = all.find((s) => s.name === `replay ${names.mainExchange}`);
    assert.ok(replay, all.map((s) => s.name).join(', '));
    const park = all.find((s) => s.name === `park ${names.parkingQueue}`);
    assert.equal(replay.parentSpanContext?.spanId, park?.spanContext().spanId, 'a child of the parked copy\'s send');
    assert.equal(replay.attributes['messaging.message.id'], 'replay-me');
    const process2 = all.filter((s) => s.name === `process ${names.mainQueue}`)[1];
    assert.equal(process2?.parentSpanContext?.spanId, replay.spanContext().spanId);
  });

  it('without a tracer provider nothing is recorded and the trace context still travels: consume, retry, park, replay', async () => {
    const { seen, published } = await loadRetryFlow({ retryDelay: '100' });
    helper.getNode('pub').receive({ payload: { n: 3 }, traceparent: GIVEN, tracestate: 'shop=1' });
    await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked');
    assert.equal(published[0]?.amqp.published.traceparent, GIVEN, 'retry-publish sends msg.traceparent as it is');
    assert.deepEqual(seen.map((m) => [m.retry.attempt, m.traceparent, m.tracestate, m.amqp.headers.traceparent]), [
      [1, GIVEN, 'shop=1', GIVEN],
      [2, GIVEN, 'shop=1', GIVEN],
    ]);
    helper.getNode('replay').receive({});
    await waitFor(() => seen.length === 3, 'the replayed message consumed again');
    assert.equal(seen[2]?.traceparent, GIVEN);
    assert.equal(seen[2]?.tracestate, 'shop=1');

    // A msg without one starts a new trace; a delivery without one has none.
    const first = (n: number): Msg | undefined => seen.find((m) => m.payload.n === n);
    helper.getNode('pub').receive({ payload: { n: 4 } });
    await waitFor(() => published.length === 2 && first(4) !== undefined, 'the second message published and consumed');
    assert.match(String(first(4)?.traceparent), TRACEPARENT);
    assert.equal(first(4)?.traceparent, published[1]?.amqp.published.traceparent);
    assert.notEqual(first(4)?.traceparent.slice(3, 35), TRACE);
    await broker.publish(names.mainExchange, names.routingKey, { n: 5 });
    await waitFor(() => first(5) !== undefined, 'a message without trace context consumed');
    assert.equal('traceparent' in (first(5) ?? {}), false);
  });

  it('batch mode: one span per batch, linked to each item\'s process span; the batch msg carries its context, and it ends with the last item settled', async () => {
    const spans = recordSpans();
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      consumerNode([['seen']], { batch: true, batchSize: '3', batchWait: '60000' }),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
    ]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (msg: Msg) => seen.push(msg));
    await broker.waitForConsumer(names.mainQueue);
    await broker.publish(names.mainExchange, names.routingKey, { n: 1 }, { headers: { traceparent: GIVEN } });
    for (const n of [2, 3]) await broker.publish(names.mainExchange, names.routingKey, { n });
    await waitFor(() => seen.length === 1, 'one batch msg');
    const batchName = `batch ${names.mainQueue}`;
    assert.equal(spans.getFinishedSpans().some((s) => s.name === batchName), false, 'open while its items are');
    helper.getNode('ack').receive(seen[0]!);
    await waitFor(() => spans.getFinishedSpans().some((s) => s.name === batchName), 'the batch span ended');

    const all = spans.getFinishedSpans();
    const batch = all.find((s) => s.name === batchName);
    assert.ok(batch);
    assert.equal(batch.kind, SpanKind.CONSUMER);
    assert.equal(batch.attributes['messaging.batch.message_count'], 3);
    const processes = all.filter((s) => s.name === `process ${names.mainQueue}`);
    assert.equal(processes.length, 3);
    assert.deepEqual(batch.links.map((l) => l.context.spanId).sort(), processes.map((s) => s.spanContext().spanId).sort(), 'a link to each item');
    assert.equal(processes.find((s) => s.spanContext().traceId === TRACE)?.parentSpanContext?.spanId, '00f067aa0ba902b7', 'the first item in the trace it carried');
    const { traceId, spanId } = batch.spanContext();
    assert.equal(seen[0]?.traceparent, `00-${traceId}-${spanId}-01`, 'msg.traceparent: the batch span');
    assert.deepEqual(seen[0]?.amqp.items.map((i: Msg) => i.traceparent).sort(), processes.map((s) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`).sort(), 'each item: its process span');
  });
});
