import assert from 'node:assert/strict';
import { isoFromSeconds, plainHeaderValue, publishOptionsProblem } from '../../../src/lib/amqp/values';

describe('AMQP-encodable publish options', () => {
  it('accepts what amqplib encodes', () => {
    assert.equal(publishOptionsProblem({}), undefined);
    const headers = { s: 'x', n: 1.5, big: 2 ** 60, b: true, nil: null, buf: Buffer.from('x'), list: ['a', 1, [true]], nested: { k: { deep: 1 } }, typed: { '!': 'timestamp', value: 1 }, gone: undefined };
    assert.equal(publishOptionsProblem({ messageId: 'm', expiration: 1000, priority: 9, headers }), undefined);
  });

  it('names the value it cannot encode', () => {
    assert.match(String(publishOptionsProblem({ headers: { when: new Date() } })), /^headers.when is a Date/);
    assert.match(String(publishOptionsProblem({ headers: { n: 10n } })), /^headers.n is a bigint/);
    assert.match(String(publishOptionsProblem({ headers: { f: () => 1 } })), /^headers.f is a function/);
    assert.match(String(publishOptionsProblem({ headers: { a: [1, undefined] } })), /^headers.a\[1\] is undefined/);
    assert.match(String(publishOptionsProblem({ headers: { x: { y: Number.NaN } } })), /^headers.x.y is NaN/);
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    assert.match(String(publishOptionsProblem({ headers: { loop } })), /^headers.loop.self refers to itself/);
    assert.match(String(publishOptionsProblem({ headers: { ['k'.repeat(256)]: 1 } })), /key longer than 255 bytes/);
    assert.match(String(publishOptionsProblem({ headers: 'text' })), /headers must be an object/);
    assert.match(String(publishOptionsProblem({ correlationId: 42 })), /correlationId must be a string/);
    assert.match(String(publishOptionsProblem({ messageId: 'x'.repeat(256) })), /messageId is longer than 255 bytes/);
    assert.match(String(publishOptionsProblem({ priority: 256 })), /priority must be a whole number from 0 to 255/);
  });

  it('a repeated (not circular) object is fine', () => {
    const shared = { a: 1 };
    assert.equal(publishOptionsProblem({ headers: { one: shared, two: shared } }), undefined);
  });
});

describe('headers as plain data', () => {
  it('unwraps amqplib\'s typed values: timestamps as ISO strings, decimals as numbers, in arrays and tables too', () => {
    const stamp = { '!': 'timestamp', value: 1_700_000_000 };
    const headers = { t: stamp, d: { '!': 'decimal', value: { places: 3, digits: 1500 } }, l: { '!': 'long', value: 7 }, deep: { list: [stamp, 'x'] }, n: 5n, s: 'text', b: true };
    assert.deepEqual(plainHeaderValue(headers), { t: '2023-11-14T22:13:20.000Z', d: 1.5, l: 7, deep: { list: ['2023-11-14T22:13:20.000Z', 'x'] }, n: 5, s: 'text', b: true });
  });
  it('a timestamp out of Date\'s range (a forged header) stays a number instead of throwing', () => {
    assert.deepEqual(plainHeaderValue({ t: { '!': 'timestamp', value: 1e20 }, ok: { '!': 'timestamp', value: 0 } }), { t: 1e20, ok: '1970-01-01T00:00:00.000Z' });
  });

  it('keeps byte arrays as Buffers on msg, as text for JSON views; leaves the input alone', () => {
    const bytes = Buffer.from('ab');
    const headers = { bytes, t: { '!': 'timestamp', value: 0 } };
    assert.equal((plainHeaderValue(headers) as { bytes: unknown }).bytes, bytes);
    assert.deepEqual(plainHeaderValue(headers, true), { bytes: 'ab', t: '1970-01-01T00:00:00.000Z' });
    assert.deepEqual(headers.t, { '!': 'timestamp', value: 0 });
  });
});

describe('AMQP timestamps as ISO strings (isoFromSeconds)', () => {
  it('converts each second right, whatever was converted before (the x-death times of one message alternate)', () => {
    const times = [1714564800, 1714564801, 1714564800, 1714564801, 0, 1714564802, 1714564803, 1714564804, 1714564800];
    for (const t of times) assert.equal(isoFromSeconds(t), new Date(t * 1000).toISOString());
  });

  it('gives no time for a second out of Date\'s range or not a number, and still converts the next one', () => {
    assert.equal(isoFromSeconds(1e16), undefined);
    assert.equal(isoFromSeconds(Number.NaN), undefined);
    assert.equal(isoFromSeconds(1714564800), '2024-05-01T12:00:00.000Z');
  });
});
