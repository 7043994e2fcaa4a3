/**
 * The gate's store calls: with a store that takes the writes and the claims in one call (`exchange`)
 * the completes of one turn go with the claims of the next, several calls are in flight, a claim
 * never passes a write of its key; with a store that answers at once (memory) nothing waits a turn.
 */
import assert from 'node:assert/strict';
import { DedupeGate, MemoryDedupeStore, type ClaimResult, type DedupeKey, type DedupeStore, type StoreExchange } from '../../../src/lib/dedupe';
import { MAX_IN_FLIGHT } from '../../../src/lib/dedupe/store-batch';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The memory store's semantics behind calls that answer only when the test says (`answer()`), each call logged. */
class SlowExchangeStore implements DedupeStore {
  readonly description = 'slow store';
  readonly maxKeyBytes = 100;
  readonly inner = new MemoryDedupeStore();
  readonly calls: string[] = [];
  private readonly pending: Array<() => void> = [];
  prepare(): Promise<void> {
    return Promise.resolve();
  }
  ping(): Promise<void> {
    return Promise.resolve();
  }
  get inFlight(): number {
    return this.pending.length;
  }
  /** Answers the oldest call in flight (it runs on the store then, as a round trip would). */
  answer(): void {
    this.pending.shift()?.();
  }
  /** Answers the newest call in flight first (calls on a pool of connections may answer out of order). */
  answerNewest(): void {
    this.pending.pop()?.();
  }
  private later<T>(what: string, work: () => Promise<T>): Promise<T> {
    this.calls.push(what);
    return new Promise((resolve, reject) => this.pending.push(() => void work().then(resolve, reject)));
  }
  claim(keys: readonly DedupeKey[], owner: string, leaseMs: number): Promise<ClaimResult[]> {
    return this.later(`claim ${keys.map((k) => k.key).join(',')}`, () => this.inner.claim(keys, owner, leaseMs));
  }
  complete(keys: readonly DedupeKey[], retentionMs: number): Promise<void> {
    return this.later(`complete ${keys.map((k) => k.key).join(',')}`, () => this.inner.complete(keys, retentionMs));
  }
  release(keys: readonly DedupeKey[], owner: string): Promise<void> {
    return this.later(`release ${keys.map((k) => k.key).join(',')}`, () => this.inner.release(keys, owner));
  }
  exchange(calls: StoreExchange): Promise<ClaimResult[]> {
    const names = (keys: readonly DedupeKey[]): string => keys.map((k) => k.key).join(',');
    return this.later(`done[${names(calls.complete)}] gone[${names(calls.release)}] claim[${names(calls.claim)}]`, () => this.inner.exchange(calls));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function gateOn(store: DedupeStore): DedupeGate {
  return new DedupeGate({ store, scope: 'q', leaseMs: 60_000, retentionMs: 60_000, storeDown: 'pause' });
}

async function settle(store: SlowExchangeStore): Promise<void> {
  for (let i = 0; i < 20; i += 1) {
    while (store.inFlight > 0) store.answer();
    await nextTurn();
  }
}

describe('dedupe gate: store calls', () => {
  it('the completes of one turn go with the claims of the next in one call', async () => {
    const store = new SlowExchangeStore();
    const g = gateOn(store);
    const first = Promise.all(['a', 'b'].map((k) => g.admit(k)));
    await nextTurn();
    store.answer();
    assert.deepEqual(await first, ['claimed', 'claimed']);
    const recorded = Promise.all(['a', 'b'].map((k) => g.complete(k)));
    const next = Promise.all(['c', 'd'].map((k) => g.admit(k)));
    await nextTurn();
    assert.deepEqual(store.calls, ['done[] gone[] claim[a,b]', 'done[a,b] gone[] claim[c,d]'], 'one round trip, not two');
    await settle(store);
    await recorded;
    assert.deepEqual(await next, ['claimed', 'claimed']);
    const copy = g.admit('a');
    await settle(store);
    assert.equal(await copy, 'duplicate');
    await g.close();
  });

  it(`up to ${MAX_IN_FLIGHT} calls in flight; what comes meanwhile goes in one call when one answers`, async () => {
    const store = new SlowExchangeStore();
    const g = gateOn(store);
    const admitted: Array<Promise<string>> = [];
    for (let turn = 0; turn < MAX_IN_FLIGHT + 3; turn += 1) {
      admitted.push(g.admit(`k${turn}`));
      await nextTurn();
    }
    assert.equal(store.inFlight, MAX_IN_FLIGHT, 'several batches in flight, no more');
    store.answer();
    await nextTurn();
    await nextTurn();
    assert.equal(store.calls.at(-1), `done[] gone[] claim[k${MAX_IN_FLIGHT},k${MAX_IN_FLIGHT + 1},k${MAX_IN_FLIGHT + 2}]`, 'the waiting turns in one call');
    await settle(store);
    assert.deepEqual(await Promise.all(admitted), admitted.map(() => 'claimed'));
    await g.close();
  });

  it("a store's own maxInFlight is the limit (PostgreSQL: 2)", async () => {
    class TwoAtOnce extends SlowExchangeStore {
      readonly maxInFlight = 2;
    }
    const store = new TwoAtOnce();
    const g = gateOn(store);
    const admitted: Array<Promise<string>> = [];
    for (let turn = 0; turn < 5; turn += 1) {
      admitted.push(g.admit(`k${turn}`));
      await nextTurn();
    }
    assert.equal(store.inFlight, 2, 'no more than the store asks for');
    store.answer();
    await nextTurn();
    await nextTurn();
    assert.equal(store.calls.at(-1), 'done[] gone[] claim[k2,k3,k4]', 'the waiting turns in one call');
    await settle(store);
    assert.deepEqual(await Promise.all(admitted), admitted.map(() => 'claimed'));
    await g.close();
  });

  it('answers are taken in the order the calls went out, whatever order they come in (acks stay ascending)', async () => {
    const store = new SlowExchangeStore();
    const g = gateOn(store);
    const told: string[] = [];
    const admit = (key: string): Promise<void> => g.admit(key).then((admission) => void told.push(`${key} ${admission}`));
    const first = admit('a');
    await nextTurn();
    const second = admit('b');
    await nextTurn();
    assert.equal(store.inFlight, 2);
    store.answerNewest(); // b's call answers first
    await nextTurn();
    await nextTurn();
    assert.deepEqual(told, [], "b's answer waits for a's call");
    store.answer();
    await Promise.all([first, second]);
    assert.deepEqual(told, ['a claimed', 'b claimed'], 'in call order');
    // Completes too: b's recorded only after a's.
    const recorded: string[] = [];
    const completes = [g.complete('a').then(() => void recorded.push('a')), g.complete('b').then(() => void recorded.push('b'))];
    await nextTurn();
    const third = admit('c'); // a call in flight with a's and b's completes, then one with c's claim
    await nextTurn();
    assert.equal(store.inFlight, 2);
    store.answerNewest();
    await nextTurn();
    await nextTurn();
    assert.deepEqual(recorded, [], 'the later call waits');
    await settle(store);
    await Promise.all([...completes, third]);
    assert.deepEqual(recorded, ['a', 'b']);
    await g.close();
  });

  it('a call that fails waits its turn too: the answer of a call after it is taken after the failure', async () => {
    class FailingFirst extends SlowExchangeStore {
      private failNext = true;
      override exchange(calls: StoreExchange): Promise<ClaimResult[]> {
        const answer = super.exchange(calls);
        if (!this.failNext) return answer;
        this.failNext = false;
        return answer.then(() => Promise.reject(new Error('connection lost')));
      }
    }
    const store = new FailingFirst();
    const g = gateOn(store);
    const downs: string[] = [];
    g.on('down', (why) => downs.push(why));
    const first = g.admit('a');
    await nextTurn();
    const second = g.admit('b');
    let secondTold = false;
    void second.then(() => (secondTold = true));
    await nextTurn();
    store.answerNewest();
    await nextTurn();
    await nextTurn();
    assert.deepEqual([downs, secondTold], [[], false], 'b waits for the call before it');
    store.answer();
    await nextTurn();
    await nextTurn();
    assert.equal(downs.length, 1, 'the failure is taken first');
    assert.equal(await second, 'claimed', "the later call's answer still counts");
    g.endAdmissions();
    assert.equal(await first, 'unchecked', 'the failed claim waited for the store (let go of here)');
    await g.close();
  });

  it('a claim never passes a write of its key: a released key claimed again waits for the release to answer', async () => {
    const store = new SlowExchangeStore();
    const g = gateOn(store);
    const first = g.admit('k');
    await nextTurn();
    store.answer();
    assert.equal(await first, 'claimed');
    g.release('k'); // retried
    const again = g.admit('k'); // a copy arrives in the same turn
    await nextTurn();
    assert.deepEqual(store.calls.slice(1), ['done[] gone[k] claim[]'], 'the claim is not in the call that releases it');
    store.answer();
    await nextTurn();
    await nextTurn();
    assert.deepEqual(store.calls.slice(2), ['done[] gone[] claim[k]'], 'it goes once the release answered');
    await settle(store);
    assert.equal(await again, 'claimed');
    await g.close();
  });

  it('a store that answers at once (memory): admitted and recorded in the same turn, a waiting copy told at once', async () => {
    const store = new MemoryDedupeStore();
    const g = gateOn(store);
    let turned = false;
    setImmediate(() => (turned = true));
    assert.equal(await g.admit('k'), 'claimed');
    const copy = g.admit('k');
    assert.equal(g.completeNow('k'), true, 'recorded without a call');
    assert.equal(await copy, 'duplicate');
    assert.equal(await g.admit('k'), 'duplicate');
    g.release('x'); // nothing held: a no-op at once
    assert.equal(turned, false, 'no turn waited for');
    await g.close();
  });
});

describe('dedupe gate: the claim window (a consumer in batch mode)', () => {
  const windowed = (store: DedupeStore, waitMs = 60_000): DedupeGate =>
    new DedupeGate({ store, scope: 'q', leaseMs: 60_000, retentionMs: 60_000, storeDown: 'pause', claimWindow: { size: 3, waitMs } });

  it('claims of several turns go as one call once a batch of them is here', async () => {
    const store = new SlowExchangeStore();
    const g = windowed(store);
    const admitted = ['a', 'b', 'c'].map(async (k, i) => {
      for (let turn = 0; turn < i; turn += 1) await nextTurn();
      return g.admit(k);
    });
    for (let turn = 0; turn < 4; turn += 1) await nextTurn();
    assert.deepEqual(store.calls, ['done[] gone[] claim[a,b,c]']);
    await settle(store);
    assert.deepEqual(await Promise.all(admitted), ['claimed', 'claimed', 'claimed']);
  });

  it('a partial batch of claims goes once the wait ran out; completes go meanwhile on their own', async () => {
    const store = new SlowExchangeStore();
    const g = windowed(store, 30);
    const first = Promise.all(['a', 'b', 'c'].map((k) => g.admit(k)));
    await nextTurn();
    await settle(store);
    assert.deepEqual(await first, ['claimed', 'claimed', 'claimed']);
    const later = g.admit('d');
    const recorded = g.complete('a');
    await nextTurn();
    assert.deepEqual(store.calls.slice(1), ['done[a] gone[] claim[]'], 'the complete alone; the claim waits');
    await settle(store);
    await recorded;
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.deepEqual(store.calls.slice(2), ['done[] gone[] claim[d]']);
    await settle(store);
    assert.equal(await later, 'claimed');
  });

  it('a consumer that stops lets go of the claims in the window (nothing sent after)', async () => {
    const store = new SlowExchangeStore();
    const g = windowed(store, 20);
    const waiting = g.admit('a');
    await nextTurn();
    g.endAdmissions();
    assert.equal(await waiting, 'unchecked');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.deepEqual(store.calls, []);
  });
});
