/**
 * trace — following a message across hops: W3C trace context (`traceparent`, `tracestate`) on AMQP
 * headers, pure, and spans through OpenTelemetry when a user's process records them (an optional peer
 * dependency, loaded only when a node asks).
 */
export {
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  TRACESTATE_MAX_LENGTH,
  TRACESTATE_MAX_MEMBERS,
  cleanTracestate,
  formatTraceparent,
  isTraceparent,
  newTraceparent,
  parseTraceparent,
  setTrace,
  traceIdOf,
  traceOf,
  type TraceHeaders,
  type TraceParent,
} from './context';
export { TRACER_NAME, openTelemetryTracer, type MessageSpan, type MessageTracer, type SpanAttributes, type SpanKindName } from './tracing';
export { messagingAttributes, spanName, type MessagingOperation, type TracedMessage } from './attributes';
