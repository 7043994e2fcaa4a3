/**
 * A delivery's trace: the trace context it carries goes to the flow (`msg.traceparent`), and, when the
 * consumer records spans, its processing, its settle (with the outcome) and the copy a retry tier or a
 * park makes are spans of the message's trace — the copy carries its send's context on. In batch mode
 * a batch has one span more, linked to its items' process spans (`startBatch`).
 */
import type { DeliveredMessage } from '../message';
import type { Decision, DeliverySpans, SettleOutcome, TrackedDelivery } from '../settle';
import { messagingAttributes, setTrace, spanName, traceOf, type MessageSpan, type MessageTracer, type TraceHeaders } from '../trace';

/** Puts a trace context on what the flow gets (replacing the one there). */
function show(delivered: DeliveredMessage, trace: TraceHeaders): void {
  delivered.traceparent = trace.traceparent;
  if (trace.tracestate === undefined) delete delivered.tracestate;
  else delivered.tracestate = trace.tracestate;
}

/** The trace context of a delivery's headers onto what the flow gets (when it carries a valid one). */
export function carryTrace(delivered: DeliveredMessage, headers: Record<string, unknown>): void {
  const trace = traceOf(headers);
  if (trace !== undefined) show(delivered, trace);
}

/** Starts a delivery's process span, a child of the context it carries; the flow gets the span's context. */
export function startProcess(tracer: MessageTracer, queue: string, entry: TrackedDelivery, delivered: DeliveredMessage): void {
  const { message } = entry;
  // The routing key it was first published with (a retry comes back through the retry route), as msg.topic shows it.
  const attributes = messagingAttributes('process', queue, delivered.amqp.routingKey, message);
  attributes['messaging.rabbitmq.message.delivery_tag'] = message.fields.deliveryTag;
  attributes['rabbitmq_retry.attempt'] = entry.retry.attempt;
  const process = tracer.start(spanName('process', queue), 'consumer', attributes, traceOf(message.properties.headers));
  entry.spans = { process };
  show(delivered, process.trace);
}

/**
 * Batch mode: one span for a batch (`batch <queue>`, its item count), the root of a trace of its own
 * linked to each item's process span (each item stays in its own trace); the flow gets its context on
 * the batch msg. It ends when the last of its items is settled or ended.
 */
export function startBatch(tracer: MessageTracer, queue: string, entries: readonly TrackedDelivery[]): MessageSpan {
  const processes: MessageSpan[] = [];
  for (const entry of entries) if (entry.spans !== undefined) processes.push(entry.spans.process);
  const attributes = messagingAttributes('batch', queue, undefined);
  attributes['messaging.batch.message_count'] = entries.length;
  const span = tracer.start(spanName('batch', queue), 'consumer', attributes, undefined, processes);
  const batch = { span, open: processes.length };
  for (const entry of entries) if (entry.spans !== undefined) entry.spans.batch = batch;
  if (batch.open === 0) span.end();
  return span;
}

/** Starts the settle span (a child of the process span) and, for a copy, its send, whose context the copy carries. */
export function startSettle(tracer: MessageTracer, queue: string, spans: DeliverySpans, entry: TrackedDelivery, decision: Decision): void {
  const { message } = entry;
  const settle = tracer.start(spanName('settle', queue), 'client', messagingAttributes('settle', queue, undefined, message), spans.process);
  settle.set({ 'rabbitmq_retry.decision': decision.kind });
  spans.settle = settle;
  if (decision.kind !== 'republish' && decision.kind !== 'park') return;
  const operation = decision.kind === 'park' ? 'park' : 'retry';
  // A copy goes through the default exchange to its queue.
  const copy = tracer.start(spanName(operation, decision.queue), 'producer', messagingAttributes(operation, '', decision.queue, message), settle);
  spans.copy = copy;
  setTrace((decision.options.headers ??= {}) as Record<string, unknown>, copy.trace);
}

/** Ends a settled delivery's spans, its outcome on the settle span. */
export function endSpans(spans: DeliverySpans, outcome: SettleOutcome, kind: string | undefined): void {
  spans.settle?.set({ 'rabbitmq_retry.outcome': outcome.done, 'rabbitmq_retry.attempt': outcome.attempt, 'rabbitmq_retry.park_reason': outcome.parkReason, 'rabbitmq_retry.error_kind': kind });
  endAll(spans);
}

/** Ends the spans of a delivery that could not be settled (a failed copy, a lost channel), failed. */
export function failSpans(spans: DeliverySpans, error: unknown): void {
  (spans.copy ?? spans.settle ?? spans.process).fail(error);
  endAll(spans);
}

function endAll(spans: DeliverySpans): void {
  spans.copy?.end();
  spans.settle?.end();
  spans.process.end();
  const { batch } = spans;
  if (batch === undefined) return;
  spans.batch = undefined;
  batch.open -= 1;
  if (batch.open === 0) batch.span.end();
}
