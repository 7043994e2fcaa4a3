import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { openTelemetryTracer, parseTraceparent, TRACER_NAME } from '../../../src/lib/trace';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('spans through OpenTelemetry', () => {
  afterEach(() => trace.disable());

  it('makes no tracer without @opentelemetry/api', () => {
    assert.equal(
      openTelemetryTracer(() => undefined),
      undefined,
    );
  });

  it('makes no tracer while no tracer provider is registered (the API alone records nothing)', () => {
    trace.disable();
    assert.equal(openTelemetryTracer(), undefined);
  });

  describe('with an SDK registered', () => {
    let exporter: InMemorySpanExporter;
    beforeEach(() => {
      exporter = new InMemorySpanExporter();
      trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    });

    it('records a span as a child of the trace context a message carries, and hands on its own', () => {
      const tracer = openTelemetryTracer();
      assert.ok(tracer);
      const span = tracer.start('process q', 'consumer', { 'messaging.system': 'rabbitmq', dropped: undefined }, { traceparent: PARENT, tracestate: 'a=1' });
      const own = parseTraceparent(span.trace.traceparent);
      assert.equal(own?.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
      assert.notEqual(own?.spanId, '00f067aa0ba902b7');
      assert.equal(span.trace.tracestate, 'a=1');
      span.end();
      const [recorded] = exporter.getFinishedSpans();
      assert.ok(recorded);
      assert.equal(recorded.name, 'process q');
      assert.equal(recorded.kind, SpanKind.CONSUMER);
      assert.equal(recorded.instrumentationScope.name, TRACER_NAME);
      assert.equal(recorded.parentSpanContext?.spanId, '00f067aa0ba902b7');
      assert.equal(recorded.parentSpanContext?.isRemote, true);
      assert.deepEqual(recorded.attributes, { 'messaging.system': 'rabbitmq' });
    });

    it('parents a span by a span of its own, and starts a new trace without a parent (or with an invalid one)', () => {
      const tracer = openTelemetryTracer();
      assert.ok(tracer);
      const root = tracer.start('publish x', 'producer', {}, { traceparent: 'not one' });
      const child = tracer.start('settle q', 'client', {}, root);
      child.end();
      root.end();
      const [c, r] = exporter.getFinishedSpans();
      assert.equal(r?.parentSpanContext, undefined);
      assert.equal(c?.spanContext().traceId, r?.spanContext().traceId);
      assert.equal(c?.parentSpanContext?.spanId, r?.spanContext().spanId);
      assert.equal(c?.kind, SpanKind.CLIENT);
      assert.equal(r?.kind, SpanKind.PRODUCER);
    });

    it('links a span to the spans given, each in its own trace; a span of another tracer is left out', () => {
      const tracer = openTelemetryTracer();
      assert.ok(tracer);
      const a = tracer.start('process q', 'consumer', {}, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
      const b = tracer.start('process q', 'consumer', {});
      const foreign = { trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, set: () => undefined, fail: () => undefined, end: () => undefined };
      tracer.start('batch q', 'consumer', {}, undefined, [a, b, foreign]).end();
      const [batch] = exporter.getFinishedSpans();
      assert.equal(batch?.name, 'batch q');
      assert.equal(batch?.parentSpanContext, undefined);
      assert.deepEqual(
        batch?.links.map((l) => [l.context.traceId, l.context.spanId]),
        [a, b].map((s) => [s.trace.traceparent.slice(3, 35), s.trace.traceparent.slice(36, 52)]),
      );
    });

    it('marks a failed span with error.type and an error status', () => {
      const tracer = openTelemetryTracer();
      assert.ok(tracer);
      const span = tracer.start('park p', 'producer', {});
      span.fail(Object.assign(new Error('no route'), { kind: 'broker' }));
      span.end();
      const other = tracer.start('relay x', 'producer', {});
      other.fail('timeout');
      other.end();
      const [a, b] = exporter.getFinishedSpans();
      assert.equal(a?.status.code, SpanStatusCode.ERROR);
      assert.equal(a?.status.message, 'no route');
      assert.equal(a?.attributes['error.type'], 'broker');
      assert.equal(b?.attributes['error.type'], '_OTHER');
    });
  });
});
