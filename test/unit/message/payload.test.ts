import assert from 'node:assert/strict';
import { charsetOf, decodePayload, encodePayload, isJsonContentType } from '../../../src/lib/message/payload';

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

  describe('charset', () => {
    const cafeLatin1 = Buffer.from('café crème', 'latin1');

    it('reads the charset parameter, quoted or not, in any case', () => {
      assert.equal(charsetOf('text/plain; charset=ISO-8859-1'), 'iso-8859-1');
      assert.equal(charsetOf('text/plain;format=flowed; Charset="utf-16le"'), 'utf-16le');
      assert.equal(charsetOf('text/plain'), undefined);
      assert.equal(charsetOf(undefined), undefined);
    });

    it('decodes latin1 text as latin1, not as UTF-8', () => {
      for (const label of ['iso-8859-1', 'latin1']) {
        assert.deepEqual(decodePayload(cafeLatin1, `text/plain; charset=${label}`), { ok: true, payload: 'café crème', as: 'string' });
      }
    });

    it('decodes UTF-16LE, and JSON in a declared charset', () => {
      assert.deepEqual(decodePayload(Buffer.from('café', 'utf16le'), 'text/plain; charset=utf-16le'), { ok: true, payload: 'café', as: 'string' });
      const json = Buffer.from('{"name":"café"}', 'latin1');
      assert.deepEqual(decodePayload(json, 'application/json; charset=iso-8859-1'), { ok: true, payload: { name: 'café' }, as: 'json' });
    });

    it('sends a body that is not valid in its charset to the invalid-body policy, with its bytes', () => {
      const asUtf8 = decodePayload(cafeLatin1, 'text/plain; charset=utf-8');
      assert.deepEqual(asUtf8, { ok: false, error: 'body is not valid utf-8', raw: cafeLatin1 });
      // No charset means UTF-8: a latin1 body without one is not silently turned into replacement characters.
      assert.equal(decodePayload(cafeLatin1, 'text/plain').ok, false);
      assert.equal(decodePayload(cafeLatin1, 'application/json').ok, false);
      const ascii = decodePayload(cafeLatin1, 'text/plain; charset=us-ascii');
      assert.match(!ascii.ok ? ascii.error : '', /^body is not valid us-ascii \(byte 0xe9 at offset 3\)$/);
      assert.deepEqual(decodePayload(Buffer.from('cafe'), 'text/plain; charset=us-ascii'), { ok: true, payload: 'cafe', as: 'string' });
    });

    it('names an unknown charset', () => {
      const result = decodePayload(Buffer.from('x'), 'text/plain; charset=klingon');
      assert.match(!result.ok ? result.error : '', /unknown charset 'klingon'/);
    });

    it('leaves a buffer alone whatever the charset says', () => {
      assert.deepEqual(decodePayload(cafeLatin1, 'text/plain; charset=klingon', 'buffer'), { ok: true, payload: cafeLatin1, as: 'buffer' });
    });
  });
});
