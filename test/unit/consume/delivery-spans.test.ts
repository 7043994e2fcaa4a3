/** Batch mode's span (issue 51): one per batch, linked to its items' process spans, ending with the last of them. */
import assert from 'node:assert/strict';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ConsumeMessage } from 'amqplib';
import { endSpans, failSpans, startBatch, startProcess } from '../../../src/lib/consume/delivery-spans';
import type { DeliveredMessage } from '../../../src/lib/message';
import type { TrackedDelivery } from '../../../src/lib/settle';
import { openTelemetryTracer, type MessageTracer } from '../../../src/lib/trace';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const attempt1 = { attempt: 1, maxAttempts: 3, remaining: 2, firstDeathReason: null, deaths: [] };

describe('delivery spans: a batch', () => {
  let spans: InMemorySpanExporter;
  let tracer: MessageTracer;
  beforeEach(() => {
    spans = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
    tracer = openTelemetryTracer()!;
  });
  afterEach(() => trace.disable());

  /** A delivery with its process span started, as the consumer's deliveries start it. */
  function entry(tag: number, headers: Record<string, unknown> = {}): TrackedDelivery {
    const message = { content: Buffer.from('{}'), fields: { deliveryTag: tag, redelivered: false, exchange: '', routingKey: 'q', consumerTag: 'c' }, properties: { headers } } as unknown as ConsumeMessage;
    const tracked: TrackedDelivery = { id: `d${tag}`, acks: undefined as never, message, retry: attempt1, receivedAt: 0, deadline: Infinity };
    startProcess(tracer, 'q', tracked, { amqp: { routingKey: 'q' } } as DeliveredMessage);
    return tracked;
  }
  const finished = (name: string) => spans.getFinishedSpans().filter((s) => s.name === name);

  it('one span, the root of a trace of its own, linked to each item\'s process span, with the item count', () => {
    const entries = [entry(1, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` }), entry(2)];
    const batch = startBatch(tracer, 'q', entries);
    for (const e of entries) endSpans(e.spans!, { done: 'acked', attempt: 1 }, undefined);
    const [span] = finished('batch q');
    assert.ok(span);
    assert.equal(span.parentSpanContext, undefined);
    assert.notEqual(span.spanContext().traceId, TRACE);
    assert.equal(batch.trace.traceparent, `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    assert.equal(span.attributes['messaging.batch.message_count'], 2);
    assert.equal(span.attributes['messaging.operation.name'], 'batch');
    assert.equal(span.attributes['messaging.operation.type'], 'process');
    assert.deepEqual(span.links.map((l) => [l.context.traceId === TRACE, l.context.spanId]), entries.map((e, i) => [i === 0, e.spans!.process.trace.traceparent.slice(36, 52)]));
  });

  it('ends with the last of its items, settled or failed (a lost channel), once', () => {
    const entries = [entry(1), entry(2), entry(3)];
    startBatch(tracer, 'q', entries);
    endSpans(entries[0]!.spans!, { done: 'acked', attempt: 1 }, undefined);
    failSpans(entries[1]!.spans!, 'not settled: channel closed');
    assert.equal(finished('batch q').length, 0, 'open while an item is');
    endSpans(entries[2]!.spans!, { done: 'parked', attempt: 1 }, 'permanent');
    assert.equal(finished('batch q').length, 1);
    failSpans(entries[2]!.spans!, 'again');
    assert.equal(finished('batch q').length, 1, 'not ended twice');
  });

  it('a batch of deliveries without spans ends at once, linked to none', () => {
    const bare: TrackedDelivery = { ...entry(1), spans: undefined };
    startBatch(tracer, 'q', [bare]);
    const [span] = finished('batch q');
    assert.equal(span?.links.length, 0);
  });
});
