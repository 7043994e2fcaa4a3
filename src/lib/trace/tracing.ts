/**
 * Spans through OpenTelemetry, when a user's process records them: `@opentelemetry/api` (an optional
 * peer dependency) is loaded only when asked for (a node starting), and only a registered tracer
 * provider makes a tracer — otherwise {@link openTelemetryTracer} returns undefined and the caller
 * keeps that one fact: nothing is loaded, nothing is allocated per message.
 *
 * The spans are named and attributed as the OpenTelemetry messaging semantic conventions say
 * (`messaging.system` = `rabbitmq`, `messaging.operation.type` …) and parented by the W3C trace
 * context a message carries, never by an ambient context (a Node-RED flow has none worth following).
 */
import type * as Api from '@opentelemetry/api';
import { cleanTracestate, formatTraceparent, parseTraceparent, type TraceHeaders } from './context';

export type SpanKindName = 'producer' | 'consumer' | 'client' | 'internal';
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** One span, as the package uses it: the trace context it hands on, attributes, failure, end. */
export interface MessageSpan {
  /** This span's context, for the headers of a message it sends (a publish, a copy). */
  readonly trace: TraceHeaders;
  set(attributes: SpanAttributes): void;
  /** Marks the span failed (status error, `error.type`). */
  fail(error: unknown): void;
  end(): void;
}

/** What the package records spans through. */
export interface MessageTracer {
  /**
   * Starts a span: a child of `parent` (a span of the package, or the trace context a message carries), else the root of a new trace;
   * linked to the spans of `links` (a batch's span to each item's).
   */
  start(name: string, kind: SpanKindName, attributes: SpanAttributes, parent?: MessageSpan | Partial<TraceHeaders>, links?: readonly MessageSpan[]): MessageSpan;
}

/** The instrumentation scope the spans are recorded under. */
export const TRACER_NAME = 'node-red-contrib-rabbitmq-retry';

type ProxyProvider = Api.TracerProvider & { getDelegateTracer?: (name: string) => Api.Tracer | undefined };

function loadApi(): typeof Api | undefined {
  try {
    // Optional peer dependency, required only here: never when the package loads, never per message.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@opentelemetry/api') as typeof Api;
  } catch {
    return undefined;
  }
}

/**
 * A tracer when `@opentelemetry/api` is installed and a tracer provider is registered (an SDK was
 * started), else undefined. Asked once by a node when it starts: a provider registered later is seen
 * by the nodes started (deployed) after it.
 */
export function openTelemetryTracer(load: () => typeof Api | undefined = loadApi): MessageTracer | undefined {
  const api = load();
  if (api === undefined) return undefined;
  const provider = api.trace.getTracerProvider() as ProxyProvider;
  // The API's global provider is a proxy; without a registered one it has no delegate (its tracers are no-ops).
  const tracer = typeof provider.getDelegateTracer === 'function' ? provider.getDelegateTracer(TRACER_NAME) : provider.getTracer(TRACER_NAME);
  return tracer === undefined ? undefined : new OtelTracer(api, tracer);
}

class OtelSpan implements MessageSpan {
  constructor(
    readonly span: Api.Span,
    private readonly api: typeof Api,
  ) {}

  get trace(): TraceHeaders {
    const context = this.span.spanContext();
    const traceparent = formatTraceparent({ traceId: context.traceId, spanId: context.spanId, flags: context.traceFlags });
    const tracestate = context.traceState?.serialize();
    return tracestate ? { traceparent, tracestate } : { traceparent };
  }

  set(attributes: SpanAttributes): void {
    for (const [name, value] of Object.entries(attributes)) if (value !== undefined) this.span.setAttribute(name, value);
  }

  fail(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    // `error.type`: a settle failure's kind (e.g. `broker`, `stale`), else the error's name.
    const kind = error instanceof Error ? (error as Error & { kind?: unknown }).kind : undefined;
    this.span.setAttribute('error.type', typeof kind === 'string' ? kind : error instanceof Error ? error.name : '_OTHER');
    this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message });
  }

  end(): void {
    this.span.end();
  }
}

class OtelTracer implements MessageTracer {
  private readonly kinds: Record<SpanKindName, Api.SpanKind>;

  constructor(
    private readonly api: typeof Api,
    private readonly tracer: Api.Tracer,
  ) {
    const { SpanKind } = api;
    this.kinds = { producer: SpanKind.PRODUCER, consumer: SpanKind.CONSUMER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL };
  }

  start(name: string, kind: SpanKindName, attributes: SpanAttributes, parent?: MessageSpan | Partial<TraceHeaders>, links?: readonly MessageSpan[]): MessageSpan {
    const options: Api.SpanOptions = { kind: this.kinds[kind] };
    // Given at the start, as samplers see them; an SDK keeps at most its span limits' linkCountLimit (128 by default).
    if (links !== undefined) options.links = links.flatMap((link) => (link instanceof OtelSpan ? [{ context: link.span.spanContext() }] : []));
    const span = new OtelSpan(this.tracer.startSpan(name, options, this.contextOf(parent)), this.api);
    span.set(attributes);
    return span;
  }

  private contextOf(parent: MessageSpan | Partial<TraceHeaders> | undefined): Api.Context {
    const { api } = this;
    if (parent instanceof OtelSpan) return api.trace.setSpan(api.ROOT_CONTEXT, parent.span);
    const given = parent as Partial<TraceHeaders> | undefined;
    const traceparent = parseTraceparent(given?.traceparent);
    if (traceparent === undefined) return api.ROOT_CONTEXT;
    const context: Api.SpanContext = { traceId: traceparent.traceId, spanId: traceparent.spanId, traceFlags: traceparent.flags & 0xff, isRemote: true };
    const tracestate = cleanTracestate(given?.tracestate);
    if (tracestate !== undefined) context.traceState = api.createTraceState(tracestate);
    return api.trace.setSpanContext(api.ROOT_CONTEXT, context);
  }
}
