/**
 * Admission on arrival, through a real gate and memory store: a key known at once is answered at once;
 * a key from an expression (a promise) is answered once, through the callback; an unexpected error
 * while admitting a key, known at once or from an expression, parks the delivery with the reason
 * instead of leaving it unanswered.
 */
import assert from 'node:assert/strict';
import { Admission, type Arrival, type DeliveryDedupe } from '../../../src/lib/consume/admission';
import { DedupeGate, MemoryDedupeStore, type ClaimResult } from '../../../src/lib/dedupe';
import type { DeliveredMessage } from '../../../src/lib/message';

/** A memory store whose claims fail (the first `failures` of them): what the gate never expects of a store that answers at once. */
class FailingClaims extends MemoryDedupeStore {
  constructor(private failures = Infinity) {
    super();
  }

  override claimOne(...args: Parameters<MemoryDedupeStore['claimOne']>): ClaimResult {
    if (this.failures <= 0) return super.claimOne(...args);
    this.failures -= 1;
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

  it('parks a delivery whose key known at once could not be admitted, at once, with the reason', async () => {
    const a = admission(new FailingClaims(), () => ({ key: 'k4' }));
    const { now, later } = await answered(a);
    assert.deepEqual(now, { kind: 'park', reason: 'deduplication failed: store broke', error: 'deduplication failed: store broke; parked' });
    assert.deepEqual(later, []);
  });

  it('parks a delivery whose key lookup throws, at once, with the reason', async () => {
    const a = admission(new MemoryDedupeStore(), () => {
      throw new Error('no such property');
    });
    const { now, later } = await answered(a);
    assert.deepEqual(now, { kind: 'park', reason: 'deduplication failed: no such property', error: 'deduplication failed: no such property; parked' });
    assert.deepEqual(later, []);
  });

  it('leaves a key whose admission failed free: a later copy of it is admitted at once', async () => {
    const a = admission(new FailingClaims(1), () => ({ key: 'k5' }));
    assert.equal((await answered(a)).now?.kind, 'park');
    const again = await answered(a);
    assert.deepEqual(again, { now: { kind: 'deliver', key: 'k5' }, later: [] });
  });
});
