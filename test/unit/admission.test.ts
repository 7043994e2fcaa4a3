/**
 * Admission on arrival, through a real gate and memory store: a key known at once is answered at once;
 * a key from an expression (a promise) is answered once, through the callback; an unexpected error
 * while admitting such a key parks the delivery with the reason instead of leaving it unanswered.
 */
import assert from 'node:assert/strict';
import { Admission, type Arrival, type DeliveryDedupe } from '../../src/lib/consume/admission';
import { DedupeGate, MemoryDedupeStore, type ClaimResult } from '../../src/lib/dedupe';
import type { DeliveredMessage } from '../../src/lib/message';

/** A memory store whose claims fail: what the gate never expects of a store that answers at once. */
class FailingClaims extends MemoryDedupeStore {
  override claimOne(): ClaimResult {
    throw new Error('store broke');
  }
}

function admission(store: MemoryDedupeStore, keyOf: DeliveryDedupe['keyOf']): Admission {
  const gate = new DedupeGate({ store, scope: 'q', leaseMs: 60_000, retentionMs: 60_000, storeDown: 'pause' });
  return new Admission({ gate, keyOf, noKey: 'process', maxKeyBytes: 4096, scope: 'q' });
}

const delivered = {} as DeliveredMessage;
const open = { closed: false };

function answered(a: Admission): Promise<{ now: Arrival | undefined; later: Arrival[] }> {
  const later: Arrival[] = [];
  const now = a.of(delivered, open, (arrival) => later.push(arrival));
  return new Promise((resolve) => setImmediate(() => resolve({ now, later })));
}

describe('Admission', () => {
  it('answers a key known at once at once, and a second copy of it as waiting', async () => {
    const a = admission(new MemoryDedupeStore(), () => ({ key: 'k1' }));
    const first = await answered(a);
    assert.deepEqual(first, { now: { kind: 'deliver', key: 'k1' }, later: [] });
    const second = await answered(a);
    assert.equal(second.now, undefined, 'held by the first copy');
    assert.deepEqual(second.later, []);
  });

  it("answers an expression's key through the callback, once", async () => {
    const a = admission(new MemoryDedupeStore(), () => Promise.resolve({ key: 'k2' }));
    const { now, later } = await answered(a);
    assert.equal(now, undefined);
    assert.deepEqual(later, [{ kind: 'deliver', key: 'k2' }]);
  });

  it("parks a delivery whose expression key could not be admitted, with the reason", async () => {
    const a = admission(new FailingClaims(), () => Promise.resolve({ key: 'k3' }));
    const { now, later } = await answered(a);
    assert.equal(now, undefined);
    assert.deepEqual(later, [{ kind: 'park', reason: 'deduplication failed: store broke', error: 'deduplication failed: store broke; parked' }]);
  });
});
