/**
 * The stores' one-round-trip call (`exchange`: completes, releases, then claims) on the real services:
 * the same answers as the three calls made one after the other.
 */
import assert from 'node:assert/strict';
import type { DedupeKey, DedupeStore } from '../../src/lib/dedupe';
import { sharedStoreSubjects } from '../helpers/dedupe-subjects';

const k = (key: string): DedupeKey => ({ scope: 'orders', key });

const shared = sharedStoreSubjects('exchange');
const subjects = [shared.memory, shared.redis, shared.postgres];

for (const subject of subjects) {
  describe(`deduplication store exchange: ${subject.name} (real service)`, () => {
    let opened: { store: DedupeStore; cleanup(): Promise<void> };
    beforeEach(async () => {
      opened = await subject.open();
    });
    afterEach(async () => {
      await opened.cleanup();
    });

    it('completes, releases and claims in one call, answering the claims in order (a key twice included)', async () => {
      const { store } = opened;
      const exchange = store.exchange?.bind(store);
      assert.ok(exchange, 'the store makes one round trip of a turn');
      await store.claim([k('acked'), k('retried'), k('other-owner')], 'A', 60_000);
      await store.claim([k('theirs'), k('held')], 'B', 60_000);
      await store.complete([k('old')], 60_000);
      const results = await exchange({
        complete: [k('acked'), k('acked')],
        retentionMs: 60_000,
        release: [k('retried'), k('theirs')],
        claim: [k('new'), k('old'), k('held'), k('new')],
        owner: 'A',
        leaseMs: 60_000,
      });
      assert.deepEqual(
        results.map((r) => r.state),
        ['claimed', 'done', 'held', 'claimed'],
      );
      // What the writes left: acked done, retried free for anyone, another owner's claim untouched.
      const after = await store.claim([k('acked'), k('retried'), k('theirs')], 'C', 60_000);
      assert.deepEqual(
        after.map((r) => r.state),
        ['done', 'claimed', 'held'],
      );
    });

    it('only writes, or only claims', async () => {
      const exchange = opened.store.exchange?.bind(opened.store);
      assert.ok(exchange);
      assert.deepEqual(await exchange({ complete: [k('w')], retentionMs: 60_000, release: [], claim: [], owner: 'A', leaseMs: 60_000 }), []);
      assert.deepEqual(await exchange({ complete: [], retentionMs: 60_000, release: [], claim: [k('w'), k('x')], owner: 'A', leaseMs: 60_000 }), [{ state: 'done' }, { state: 'claimed' }]);
    });
  });
}
