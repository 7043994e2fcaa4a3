/** Pure parts of the stores: the memory store's bounds, batches, Redis URLs, PostgreSQL settings, errors and table names. */
import assert from 'node:assert/strict';
import { MemoryDedupeStore } from '../../../src/lib/dedupe';

const k = (key: string, scope = 'q'): { scope: string; key: string } => ({ scope, key });

describe('memory deduplication store', () => {
  it('keeps at most maxKeys records, dropping the oldest done ones first and never a live claim', async () => {
    let now = 1000;
    const store = new MemoryDedupeStore({ maxKeys: 3, now: () => now });
    await store.claim([k('claim-1')], 'A', 60_000);
    await store.complete([k('done-1'), k('done-2')], 60_000);
    await store.complete([k('done-3')], 60_000);
    assert.equal(store.size, 3);
    assert.deepEqual(await store.claim([k('done-1')], 'B', 60_000), [{ state: 'claimed' }], 'the oldest done key was dropped');
    const [held] = await store.claim([k('claim-1')], 'B', 60_000);
    assert.equal(held?.state, 'held', 'the live claim stayed');
    now += 61_000;
    assert.deepEqual(await store.claim([k('claim-1')], 'B', 60_000), [{ state: 'claimed' }], 'an ended lease is free');
  });

  it('over the bound for long (the sweep goes on where it stopped): the newest done keys kept, live claims never dropped', () => {
    let now = 0;
    const store = new MemoryDedupeStore({ maxKeys: 100, now: () => now });
    store.claimOne(k('live'), 'A', 1e9);
    for (let i = 0; i < 5000; i += 1) {
      store.claimOne(k(`m-${i}`), 'A', 1000);
      store.completeOne(k(`m-${i}`), 1e6);
      if (i % 7 === 0) store.releaseOne(k(`m-${i - 3}`), 'A'); // done already: stays
    }
    assert.equal(store.size, 100);
    assert.equal(store.claimOne(k('live'), 'B', 1000).state, 'held');
    assert.equal(store.claimOne(k('m-4999'), 'B', 1000).state, 'done');
    assert.equal(store.claimOne(k('m-4901'), 'B', 1000).state, 'done');
    assert.equal(store.claimOne(k('m-10'), 'B', 1000).state, 'claimed', 'an old one was dropped');
    now = 2e6; // every done key expired: swept as records are written
    for (let i = 0; i < 300; i += 1) store.releaseOne(k(`x-${i}`), 'A');
    for (let i = 0; i < 300; i += 1) store.completeOne(k(`n-${i}`), 1);
    assert.ok(store.size <= 100);
    assert.equal(store.claimOne(k('live'), 'B', 1000).state, 'held', 'the live claim outlived them all');
  });

  it('forgets a done key after its retention', async () => {
    let now = 0;
    const store = new MemoryDedupeStore({ now: () => now });
    await store.complete([k('x')], 1000);
    assert.deepEqual(await store.claim([k('x')], 'A', 10), [{ state: 'done' }]);
    now = 1001;
    assert.deepEqual(await store.claim([k('x')], 'A', 10), [{ state: 'claimed' }]);
  });

  it('a key done again is the youngest: the bound drops an older one first, and the later retention counts', () => {
    let now = 0;
    const store = new MemoryDedupeStore({ maxKeys: 2, now: () => now });
    store.completeOne(k('x'), 1000);
    store.completeOne(k('y'), 1000);
    now = 900;
    store.completeOne(k('x'), 1000); // a copy completed after all: x is kept until 1 900
    store.completeOne(k('z'), 1000); // over the bound: y, now the oldest, goes
    // Two records, x and z both done: y was the one dropped.
    assert.equal(store.size, 2);
    assert.equal(store.claimOne(k('z'), 'A', 10).state, 'done');
    now = 1500;
    assert.equal(store.claimOne(k('x'), 'A', 10).state, 'done', 'x kept until its later retention ends');
    now = 1901;
    assert.equal(store.claimOne(k('x'), 'A', 10).state, 'claimed');
  });

  it('a claim whose lease ended unsettled is swept as records are written, and is free meanwhile', () => {
    let now = 0;
    const store = new MemoryDedupeStore({ now: () => now });
    store.claimOne(k('stuck'), 'A', 100);
    now = 101;
    assert.equal(store.claimOne(k('stuck'), 'B', 100).state, 'claimed', 'an ended lease is free');
    now = 202;
    for (let i = 0; i < 256; i += 1) store.completeOne(k(`m-${i}`), 1e6);
    assert.equal(store.size, 256, "B's ended claim swept, the done keys kept");
  });

  it('a key with a colon is not confused with another scope', async () => {
    const store = new MemoryDedupeStore();
    await store.complete([k('b:c', 'a')], 1000);
    assert.deepEqual(await store.claim([k('c', 'a:b')], 'A', 10), [{ state: 'claimed' }]);
  });
});
