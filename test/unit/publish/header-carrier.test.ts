/** HeaderCarrier: the headers of each publish lent to amqplib on one reused object, case by case. */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ConfirmChannel, Options } from 'amqplib';
import { ConfirmPublisher } from '../../../src/lib/publish';
import { HeaderCarrier } from '../../../src/lib/publish/header-carrier';

/** What amqplib's encoder would write: the defined headers, own and inherited (it walks them with for…in). */
function encoded(headers: Record<string, unknown>): Record<string, unknown> {
  const seen: Record<string, unknown> = {};
  for (const name in headers) if (headers[name] !== undefined) seen[name] = headers[name];
  return seen;
}

describe('HeaderCarrier', () => {
  it('lends one object for every publish, holding exactly the headers of the one lent for', () => {
    const carrier = new HeaderCarrier();
    const first = carrier.lend({ traceparent: 'a', 'x-one': 1 });
    assert.deepEqual(encoded(first), { traceparent: 'a', 'x-one': 1 });
    carrier.release(first);
    assert.deepEqual(encoded(first), {});
    const second = carrier.lend({ traceparent: 'b', 'x-two': { nested: true } });
    assert.equal(second, first);
    assert.deepEqual(encoded(second), { traceparent: 'b', 'x-two': { nested: true } });
    // An explicit undefined header is no header, as amqplib has it.
    carrier.release(second);
    assert.deepEqual(encoded(carrier.lend({ 'x-gone': undefined, kept: null })), { kept: null });
  });

  it('never changes the caller\'s headers', () => {
    const carrier = new HeaderCarrier();
    const headers = { traceparent: 'a' };
    carrier.release(carrier.lend(headers));
    assert.deepEqual(headers, { traceparent: 'a' });
  });

  it('passes headers with a __proto__ name as they are (an ordinary property cannot hold it)', () => {
    const carrier = new HeaderCarrier();
    const headers = JSON.parse('{"__proto__": "x", "a": 1}') as Record<string, unknown>;
    const lent = carrier.lend(headers);
    assert.equal(lent, headers);
    carrier.release(lent); // not the carrier: nothing to empty
    assert.equal(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value, 'x');
    assert.equal(carrier.lend({ b: 2 }).b, 2);
  });

  it('keeps one object for the same names however often they are lent, and starts over once more than 64 distinct names went through it', () => {
    const carrier = new HeaderCarrier();
    const first = carrier.lend({ traceparent: 't', n0: 0 });
    carrier.release(first);
    for (let i = 0; i < 5000; i += 1) carrier.release(carrier.lend({ traceparent: `t${i}`, n0: i }));
    assert.equal(carrier.lend({ traceparent: 'again' }), first);
    carrier.release(first);
    // 2 names so far; 63 more make 65.
    for (let i = 1; i <= 63; i += 1) carrier.release(carrier.lend({ [`n${i}`]: i }));
    const after = carrier.lend({ n64: 64 });
    assert.notEqual(after, first);
    assert.deepEqual(encoded(after), { n64: 64 });
  });
});

describe('ConfirmPublisher lends each publish its headers on the carrier', () => {
  /** Takes the headers as amqplib does: read within the publish call (encoded there), never after. */
  class EncodingChannel extends EventEmitter {
    readonly written: Array<Record<string, unknown>> = [];
    readonly lent = new Set<unknown>();
    publish(_exchange: string, _routingKey: string, _content: Buffer, options: Options.Publish): boolean {
      const headers = Object.create((options.headers ?? null) as object | null) as Record<string, unknown>;
      this.lent.add(options.headers);
      this.written.push(encoded(headers));
      return true;
    }
  }

  it('writes every publish with its own headers, leaves the caller\'s options alone, and reuses one object', () => {
    const channel = new EncodingChannel();
    const publisher = new ConfirmPublisher(channel as unknown as ConfirmChannel);
    const given = [
      { mandatory: true, headers: { traceparent: 't1', 'x-retry-attempt': 2 } },
      { headers: { traceparent: 't2' } },
      { mandatory: true, headers: { tracestate: 'k=v', other: 'o' } },
      { persistent: true },
    ];
    for (const options of given) void publisher.publish('ex', 'rk', Buffer.from('x'), options);
    assert.deepEqual(channel.written, [{ traceparent: 't1', 'x-retry-attempt': 2 }, { traceparent: 't2' }, { tracestate: 'k=v', other: 'o' }, {}]);
    assert.deepEqual(given[0], { mandatory: true, headers: { traceparent: 't1', 'x-retry-attempt': 2 } });
    assert.deepEqual(given[1], { headers: { traceparent: 't2' } });
    // The three publishes with headers were lent one object; the one without none.
    assert.equal(channel.lent.size, 2);
  });
});
