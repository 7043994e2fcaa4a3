import assert from 'node:assert/strict';
import { decodePayload, encodePayload, isJsonContentType } from '../../src/lib/payload';

describe('payload decoding', () => {
  const json = Buffer.from('{"amount":10.23}');

  it('parses JSON content types', () => {
    assert.deepEqual(decodePayload(json, 'application/json'), { ok: true, payload: { amount: 10.23 }, as: 'json' });
    assert.equal(isJsonContentType('application/vnd.payment+json; charset=utf-8'), true);
    assert.equal(isJsonContentType('text/plain'), false);
  });

  it('gives text as a string and anything else as a Buffer', () => {
    assert.deepEqual(decodePayload(Buffer.from('hi'), 'text/plain; charset=utf-8'), { ok: true, payload: 'hi', as: 'string' });
    const raw = decodePayload(json, undefined);
    assert.equal(raw.ok && Buffer.isBuffer(raw.payload), true);
    const octets = decodePayload(json, 'application/octet-stream');
    assert.equal(octets.ok && octets.as, 'buffer');
  });

  it('never passes JSON that does not parse on as a string', () => {
    const result = decodePayload(Buffer.from('{"amount":'), 'application/json');
    assert.equal(result.ok, false);
    assert.match(!result.ok ? result.error : '', /body is not valid JSON/);
  });

  it('lets a forced mode override the content type', () => {
    assert.deepEqual(decodePayload(json, undefined, 'json'), { ok: true, payload: { amount: 10.23 }, as: 'json' });
    assert.deepEqual(decodePayload(json, 'application/json', 'string'), { ok: true, payload: '{"amount":10.23}', as: 'string' });
  });

  it('encodes objects as JSON and strings as text', () => {
    assert.deepEqual(encodePayload({ status: 'ok' }), { content: Buffer.from('{"status":"ok"}'), contentType: 'application/json' });
    assert.deepEqual(encodePayload('ok'), { content: Buffer.from('ok'), contentType: 'text/plain' });
    assert.deepEqual(encodePayload(Buffer.from([1])), { content: Buffer.from([1]), contentType: undefined });
    assert.deepEqual(encodePayload(5), { content: Buffer.from('5'), contentType: 'application/json' });
  });

  it('says why a payload cannot be encoded', () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    assert.throws(() => encodePayload(loop), /^Error: msg.payload cannot be encoded as JSON: Converting circular structure to JSON$/);
    assert.throws(() => encodePayload({ n: 1n }), /msg.payload cannot be encoded as JSON: Do not know how to serialize a BigInt/);
    assert.throws(() => encodePayload(() => 1), /msg.payload is a function, which cannot be sent/);
  });
});
