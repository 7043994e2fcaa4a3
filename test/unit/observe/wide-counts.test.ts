import assert from 'node:assert/strict';
import { WideCounts } from '../../../src/lib/observe';

describe('WideCounts', () => {
  it('starts 8-bit and keeps values that fit', () => {
    const c = new WideCounts(4);
    c.add(1, 255);
    assert.equal(c.get(1), 255);
    assert.equal(c.bytes, 4);
  });
  it('widens to 16-bit past 255, keeping what it held', () => {
    const c = new WideCounts(4);
    c.set(0, 9);
    c.add(1, 65_535);
    assert.deepEqual([c.get(0), c.get(1)], [9, 65_535]);
    assert.equal(c.bytes, 8);
  });
  it('widens to 32-bit past 65 535 (from 8 or 16 bits), keeping what it held', () => {
    const c = new WideCounts(4);
    c.set(0, 7);
    c.set(2, 300);
    c.add(1, 65_536);
    assert.deepEqual([c.get(0), c.get(1), c.get(2)], [7, 65_536, 300]);
    assert.equal(c.bytes, 16);
  });
  it('widens to 64-bit floats past 2^32 - 1', () => {
    const c = new WideCounts(2);
    c.set(0, 2 ** 32 + 5);
    assert.equal(c.get(0), 2 ** 32 + 5);
    assert.equal(c.bytes, 16);
  });
  it('takes a negative value as 0', () => {
    const c = new WideCounts(1);
    c.set(0, -3);
    assert.equal(c.get(0), 0);
  });
});
