import assert from 'node:assert/strict';
import type { MessageProperties } from 'amqplib';
import { parkedPublishOptions, retryPublishOptions } from '../../../src/lib/message';
import { describeParked, replayPublishOptions } from '../../../src/lib/parking';
import {
  cleanTracestate,
  formatTraceparent,
  isTraceparent,
  messagingAttributes,
  newTraceparent,
  parseTraceparent,
  setTrace,
  spanName,
  traceIdOf,
  traceOf,
  TRACESTATE_MAX_MEMBERS,
} from '../../../src/lib/trace';
import { RandomPool } from '../../../src/lib/trace/context';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const VALID = `00-${TRACE}-${SPAN}-01`;

describe('W3C traceparent', () => {
  it('reads a version 00 traceparent', () => {
    assert.deepEqual(parseTraceparent(VALID), { version: '00', traceId: TRACE, spanId: SPAN, flags: 1 });
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.flags, 0);
    assert.equal(isTraceparent(VALID), true);
  });

  it('refuses a version 00 with anything after its four fields', () => {
    assert.equal(parseTraceparent(`${VALID}-extra`), undefined);
    assert.equal(isTraceparent(`${VALID}-extra`), false);
  });

  it('reads a later version by its first four fields, with or without more', () => {
    assert.deepEqual(parseTraceparent(`cc-${TRACE}-${SPAN}-09`), { version: 'cc', traceId: TRACE, spanId: SPAN, flags: 9 });
    assert.deepEqual(parseTraceparent(`cc-${TRACE}-${SPAN}-01-what-comes-next`)?.traceId, TRACE);
    assert.equal(parseTraceparent(`cc-${TRACE}-${SPAN}-01what`), undefined);
  });

  it('refuses version ff, all-zero ids, uppercase hex and wrong lengths', () => {
    assert.equal(parseTraceparent(`ff-${TRACE}-${SPAN}-01`), undefined);
    assert.equal(parseTraceparent(`00-${'0'.repeat(32)}-${SPAN}-01`), undefined);
    assert.equal(parseTraceparent(`00-${TRACE}-${'0'.repeat(16)}-01`), undefined);
    assert.equal(isTraceparent(`00-${'0'.repeat(32)}-${SPAN}-01`), false);
    assert.equal(isTraceparent(`00-${TRACE}-${'0'.repeat(16)}-01`), false);
    assert.equal(parseTraceparent(VALID.toUpperCase()), undefined);
    assert.equal(parseTraceparent(`00-${TRACE.toUpperCase()}-${SPAN}-01`), undefined);
    assert.equal(parseTraceparent(`00-${TRACE}a-${SPAN}-01`), undefined);
    assert.equal(parseTraceparent(`00-${TRACE}-${SPAN}-1`), undefined);
    assert.equal(parseTraceparent(`0-${TRACE}-${SPAN}-01`), undefined);
    assert.equal(parseTraceparent(`00_${TRACE}_${SPAN}_01`), undefined);
    assert.equal(parseTraceparent(''), undefined);
    assert.equal(parseTraceparent(undefined), undefined);
    assert.equal(parseTraceparent(42), undefined);
    assert.equal(isTraceparent(null), false);
  });

  it('writes version 00, two hex digits of flags', () => {
    assert.equal(formatTraceparent({ traceId: TRACE, spanId: SPAN, flags: 1 }), VALID);
    assert.equal(formatTraceparent({ traceId: TRACE, spanId: SPAN, flags: 0x1ff }), `00-${TRACE}-${SPAN}-ff`);
    // A later version is passed on as 00, as the spec asks of a caller that knows only 00.
    const later = parseTraceparent(`cc-${TRACE}-${SPAN}-01-x`);
    assert.ok(later);
    assert.equal(formatTraceparent(later), VALID);
  });

  it('starts a new trace with random non-zero ids, flagged sampled', () => {
    const a = newTraceparent();
    const b = newTraceparent();
    assert.equal(isTraceparent(a), true);
    assert.notEqual(parseTraceparent(a)?.traceId, parseTraceparent(b)?.traceId);
    assert.equal(parseTraceparent(a)?.flags, 1);
    // All-zero random bytes are drawn again.
    let calls = 0;
    const random = (bytes: number): Buffer => Buffer.alloc(bytes, (calls += 1) === 1 ? 0 : 0xab);
    assert.equal(newTraceparent(random), `00-${'ab'.repeat(16)}-${'ab'.repeat(8)}-01`);
  });

  it('draws new traces from a pool that is refilled, never handing out the same bytes twice', () => {
    // A pool of 40 bytes holds one trace (24 bytes): every second trace refills it.
    const pool = new RandomPool(40);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i += 1) {
      const traceparent = newTraceparent(pool.take);
      assert.equal(isTraceparent(traceparent), true, traceparent);
      seen.add(traceparent);
    }
    assert.equal(seen.size, 2000);
    // Takes that cross the end of the pool start on fresh bytes.
    const small = new RandomPool(8);
    const first = Buffer.from(small.take(6));
    const second = Buffer.from(small.take(6));
    assert.equal(second.length, 6);
    assert.notDeepEqual(first, second);
    // And the default source gives distinct, valid traces across many refills of its 4 KiB pool.
    const many = new Set(Array.from({ length: 1000 }, () => newTraceparent()));
    assert.equal(many.size, 1000);
  });

  it('gives the trace id of a valid traceparent only', () => {
    assert.equal(traceIdOf(VALID), TRACE);
    assert.equal(traceIdOf('nonsense'), null);
    assert.equal(traceIdOf(undefined), null);
  });
});

describe('W3C tracestate', () => {
  it('keeps valid list members, dropping empty ones and spaces around them', () => {
    assert.equal(cleanTracestate('congo=t61rcWkgMzE'), 'congo=t61rcWkgMzE');
    assert.equal(cleanTracestate('rojo=00f067aa0ba902b7 , ,congo=t61rcWkgMzE'), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    assert.equal(cleanTracestate('tenant@vendor=x'), 'tenant@vendor=x');
  });

  it('drops a tracestate that breaks a rule: bad keys, values, duplicates', () => {
    assert.equal(cleanTracestate('Upper=x'), undefined);
    assert.equal(cleanTracestate('novalue'), undefined);
    assert.equal(cleanTracestate('=x'), undefined);
    assert.equal(cleanTracestate('a=x=y'), undefined, '= is not allowed in a value');
    assert.equal(cleanTracestate('a=x,a=y'), undefined);
    assert.equal(cleanTracestate('a=tab\there'), undefined, 'a tab is not allowed in a value');
    assert.equal(cleanTracestate('a=inner space'), 'a=inner space');
    assert.equal(cleanTracestate(''), undefined);
    assert.equal(cleanTracestate(' , '), undefined);
    assert.equal(cleanTracestate(7), undefined);
  });

  it('holds the limits: 32 members, 512 characters', () => {
    const members = (n: number, value = 'v'): string => Array.from({ length: n }, (_, i) => `k${i}=${value}`).join(',');
    assert.equal(cleanTracestate(members(TRACESTATE_MAX_MEMBERS)), members(TRACESTATE_MAX_MEMBERS));
    assert.equal(cleanTracestate(members(TRACESTATE_MAX_MEMBERS + 1)), undefined);
    const long = members(20, 'x'.repeat(30));
    assert.ok(long.length > 512);
    assert.equal(cleanTracestate(long), undefined);
  });
});

describe('trace context on AMQP headers', () => {
  it('reads traceparent and tracestate (strings or Buffers), tracestate only with a valid traceparent', () => {
    assert.deepEqual(traceOf({ traceparent: VALID, tracestate: 'a=1' }), { traceparent: VALID, tracestate: 'a=1' });
    assert.deepEqual(traceOf({ traceparent: Buffer.from(VALID), tracestate: Buffer.from('a=1') }), { traceparent: VALID, tracestate: 'a=1' });
    assert.deepEqual(traceOf({ traceparent: VALID, tracestate: 'Bad' }), { traceparent: VALID });
    assert.equal(traceOf({ traceparent: 'bad', tracestate: 'a=1' }), undefined);
    assert.equal(traceOf({}), undefined);
    assert.equal(traceOf(undefined), undefined);
  });

  it('sets a trace context, removing a tracestate that belonged to another', () => {
    const headers: Record<string, unknown> = { traceparent: 'old', tracestate: 'old=1', other: 1 };
    assert.deepEqual(setTrace(headers, { traceparent: VALID }), { traceparent: VALID, other: 1 });
    assert.deepEqual(setTrace(headers, { traceparent: VALID, tracestate: 'a=1' }), { traceparent: VALID, other: 1, tracestate: 'a=1' });
  });
});

describe('messaging span names and attributes', () => {
  it('names a span by operation and destination, the default exchange as amq.default', () => {
    assert.equal(spanName('publish', 'orders'), 'publish orders');
    assert.equal(spanName('park', ''), 'park amq.default');
  });

  it('gives the semantic conventions attributes of a send and a consume', () => {
    const message = { properties: { messageId: 'm-1', correlationId: 'c-1' }, content: Buffer.from('abc') };
    assert.deepEqual(messagingAttributes('publish', 'orders', 'order.created', message), {
      'messaging.system': 'rabbitmq',
      'messaging.operation.name': 'publish',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'orders',
      'messaging.rabbitmq.destination.routing_key': 'order.created',
      'messaging.message.id': 'm-1',
      'messaging.message.conversation_id': 'c-1',
      'messaging.message.body.size': 3,
    });
    assert.deepEqual(messagingAttributes('settle', 'q', '', { properties: {} }), {
      'messaging.system': 'rabbitmq',
      'messaging.operation.name': 'settle',
      'messaging.operation.type': 'settle',
      'messaging.destination.name': 'q',
    });
    assert.equal(messagingAttributes('process', 'q', 'k')['messaging.operation.type'], 'process');
    assert.equal(messagingAttributes('park', '', 'parking')['messaging.destination.name'], 'amq.default');
  });
});

describe('the copies the package makes keep the trace context', () => {
  const properties = { headers: { traceparent: VALID, tracestate: 'a=1' }, messageId: 'm-1', deliveryMode: 2 } as unknown as MessageProperties;
  const fields = { exchange: 'ex', routingKey: 'rk' };

  it('a retry-tier copy, a parked copy and a replayed one', () => {
    const kept = { traceparent: VALID, tracestate: 'a=1' };
    const retry = retryPublishOptions(properties, 1, 0, fields).headers as Record<string, unknown>;
    const parked = parkedPublishOptions({ content: Buffer.alloc(0), properties, fields, mainQueue: 'q', attempts: 2, reason: 'x', now: new Date(0) }).headers as Record<string, unknown>;
    const replayed = replayPublishOptions({ ...properties, headers: parked }, true).headers as Record<string, unknown>;
    for (const headers of [retry, parked, replayed]) assert.deepEqual(traceOf(headers), kept);
  });

  it('the parking view shows its trace id', () => {
    assert.equal(describeParked({ content: Buffer.alloc(0), properties }, 0, 10).traceId, TRACE);
    assert.equal(describeParked({ content: Buffer.alloc(0), properties: { headers: { traceparent: 'bad' } } as unknown as MessageProperties }, 0, 10).traceId, null);
    assert.equal(describeParked({ content: Buffer.alloc(0), properties: {} as MessageProperties }, 0, 10).traceId, null);
  });
});
