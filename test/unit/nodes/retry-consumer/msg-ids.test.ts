import assert from 'node:assert/strict';
import { MsgIds } from '../../../../src/nodes/retry-consumer/msg-ids';

describe('msg ids (msg._msgid of consumed messages)', () => {
  it('gives 16 hex digits like Node-RED, a counter after one random prefix', () => {
    const ids = new MsgIds();
    const [a, b, c] = [ids.next(), ids.next(), ids.next()];
    for (const id of [a, b, c]) assert.match(id, /^[0-9a-f]{16}$/);
    assert.equal(a.slice(0, 8), c.slice(0, 8));
    assert.deepEqual([a, b, c].map((id) => id.slice(8)), ['00000000', '00000001', '00000002']);
  });

  it('two consumers do not give the same ids', () => {
    const one = new MsgIds();
    const other = new MsgIds();
    assert.notEqual(one.next(), other.next());
  });
});
