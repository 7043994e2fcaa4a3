/** The parking browser's whole-body view (src/nodes/park-replay/editor-body-view.ts): JSON pretty-printed, text, or hex. */
import assert from 'node:assert/strict';
import { bodyBytes, bodyViews, HEX_LIMIT, hexDump, renderBody } from '../../../../src/nodes/park-replay/editor-body-view';

describe('parking browser body view', function () {
  it('offers JSON first for a whole JSON body, text for other text, hex for everything', function () {
    assert.deepEqual(bodyViews({ preview: '{"a":1}', previewEncoding: 'utf8', size: 7 }), ['json', 'text', 'hex']);
    assert.deepEqual(bodyViews({ preview: 'hello', previewEncoding: 'utf8', size: 5 }), ['text', 'hex']);
    assert.deepEqual(bodyViews({ preview: '{"a":', previewEncoding: 'utf8', size: 90, truncated: true }), ['text', 'hex'], 'a cut JSON body is not JSON');
    assert.deepEqual(bodyViews({ preview: 'AAEC', previewEncoding: 'base64', size: 3 }), ['hex']);
  });

  it('pretty-prints JSON, shows text as it is, and dumps bytes with offsets and ASCII', function () {
    const json = { preview: '{"order":1,"items":[{"sku":"a"}]}', previewEncoding: 'utf8' as const, size: 33 };
    assert.equal(renderBody(json, 'json').text, '{\n  "order": 1,\n  "items": [\n    {\n      "sku": "a"\n    }\n  ]\n}');
    assert.equal(renderBody(json, 'text').text, json.preview);
    const binary = { preview: Buffer.from([0, 0x41, 0xff, ...Buffer.from('0123456789abcdefXYZ')]).toString('base64'), previewEncoding: 'base64' as const, size: 22 };
    assert.deepEqual(Array.from(bodyBytes(binary)).slice(0, 3), [0, 0x41, 0xff]);
    assert.equal(
      renderBody(binary, 'json').text,
      ['00000000  00 41 ff 30 31 32 33 34  35 36 37 38 39 61 62 63  |.A.0123456789abc|', '00000010  64 65 66 58 59 5a                                 |defXYZ|'].join('\n'),
    );
    assert.equal(hexDump(new TextEncoder().encode('é')), `00000000  c3 a9${' '.repeat(18)}  ${' '.repeat(23)}  |..|`);
  });

  it('stops a hex dump at its limit and says how many bytes it leaves out', function () {
    const big = { preview: 'x'.repeat(HEX_LIMIT + 10), previewEncoding: 'utf8' as const, size: HEX_LIMIT + 10 };
    const rendered = renderBody(big, 'hex');
    assert.equal(rendered.hidden, 10);
    assert.equal(rendered.text.split('\n').length, HEX_LIMIT / 16);
    assert.equal(renderBody(big, 'text').hidden, 0);
  });
});
