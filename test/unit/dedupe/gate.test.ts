/**
 * The deduplication gate without a real store: a small in-test store with the store interface's
 * semantics, which counts its calls (batching) and fails when told (a store that is down).
 */
import assert from 'node:assert/strict';
import { DedupeGate, DedupeStoreError, MemoryDedupeStore, type ClaimResult, type DedupeKey, type DedupeStore } from '../../../src/lib/dedupe';
import { FakeTimer } from '../../helpers/fake-timer';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

class TestStore implements DedupeStore {
  readonly description = 'test store';
  readonly maxKeyBytes = 100;
  readonly records = new Map<string, { state: 'claimed' | 'done'; owner?: string; until: number }>();
  readonly calls: string[] = [];
  down: string | undefined;

  private id(k: DedupeKey): string {
    return `${k.scope}|${k.key}`;
  }
  private check(what: string, n: number): void {
    this.calls.push(`${what} ${n}`);
    if (this.down !== undefined) throw new Error(this.down);
  }
  prepare(): Promise<void> {
    return Promise.resolve();
  }
  ping(): Promise<void> {
    return this.down === undefined ? Promise.resolve() : Promise.reject(new Error(this.down));
  }
  async claim(keys: readonly DedupeKey[], owner: string, leaseMs: number): Promise<ClaimResult[]> {
    await Promise.resolve();
    this.check('claim', keys.length);
    const now = Date.now();
    return keys.map((k): ClaimResult => {
      const record = this.records.get(this.id(k));
      if (record?.state === 'done' && record.until > now) return { state: 'done' };
      if (record?.state === 'claimed' && record.until > now && record.owner !== owner) return { state: 'held', owner: record.owner ?? '', until: record.until };
      this.records.set(this.id(k), { state: 'claimed', owner, until: now + leaseMs });
      return { state: 'claimed' };
    });
  }
  async complete(keys: readonly DedupeKey[], retentionMs: number): Promise<void> {
    await Promise.resolve();
    this.check('complete', keys.length);
    for (const k of keys) this.records.set(this.id(k), { state: 'done', until: Date.now() + retentionMs });
  }
  async release(keys: readonly DedupeKey[], owner: string): Promise<void> {
    await Promise.resolve();
    this.check('release', keys.length);
    for (const k of keys) if (this.records.get(this.id(k))?.owner === owner) this.records.delete(this.id(k));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function gate(store: TestStore, options: Partial<{ storeDown: 'pause' | 'process'; leaseMs: number; recheckMs: number }> = {}): DedupeGate {
  return new DedupeGate({ store, scope: 'q', leaseMs: options.leaseMs ?? 60_000, retentionMs: 60_000, storeDown: options.storeDown ?? 'pause', recheckMs: options.recheckMs ?? 10, probe: { initialMs: 5, maxMs: 20 } });
}

describe('dedupe gate', () => {
  it('claims a new key, and a processed one is a duplicate', async () => {
    const store = new TestStore();
    const g = gate(store);
    assert.equal(await g.admit('a'), 'claimed');
    await g.complete('a');
    assert.equal(await g.admit('a'), 'duplicate');
    await g.close();
  });

  it('batches one turn: a burst of keys is one claim call, their completes one complete call', async () => {
    const store = new TestStore();
    const g = gate(store);
    const admitted = await Promise.all(['a', 'b', 'c'].map((k) => g.admit(k)));
    assert.deepEqual(admitted, ['claimed', 'claimed', 'claimed']);
    await Promise.all(['a', 'b', 'c'].map((k) => g.complete(k)));
    assert.deepEqual(store.calls, ['claim 3', 'complete 3']);
    await g.close();
  });

  it('a retried key is released: the next delivery is processed again (never the SET NX-before-handling loss)', async () => {
    const store = new TestStore();
    const g = gate(store);
    assert.equal(await g.admit('pay-1'), 'claimed');
    g.release('pay-1'); // the flow failed: retry
    await nextTurn();
    const other = gate(store);
    assert.equal(await other.admit('pay-1'), 'claimed', 'the retried message comes back, maybe to another consumer, and is processed');
    await g.close();
    await other.close();
  });

  it('a copy of a key in the flow here waits: a duplicate once the first is completed', async () => {
    const store = new TestStore();
    const g = gate(store);
    assert.equal(await g.admit('k'), 'claimed');
    let second: string | undefined;
    void g.admit('k').then((a) => (second = a));
    await sleep(20);
    assert.equal(second, undefined, 'held while the first is in the flow');
    assert.equal(g.waiting, 1);
    await g.complete('k');
    await nextTurn();
    assert.equal(second, 'duplicate');
    await g.close();
  });

  it('a copy waiting here takes the claim over when the first is retried', async () => {
    const store = new TestStore();
    const g = gate(store);
    await g.admit('k');
    const second = g.admit('k');
    g.release('k');
    assert.equal(await second, 'claimed');
    assert.equal(store.records.get('q|k')?.owner, g.owner, 'still claimed by this consumer, not released in between');
    await g.close();
  });

  it('a key another consumer holds is looked at again until it is done there', async () => {
    const store = new TestStore();
    const first = gate(store);
    const second = gate(store);
    assert.equal(await first.admit('k'), 'claimed');
    let admitted: string | undefined;
    void second.admit('k').then((a) => (admitted = a));
    await sleep(30);
    assert.equal(admitted, undefined);
    await first.complete('k');
    for (let i = 0; i < 50 && admitted === undefined; i += 1) await sleep(5);
    assert.equal(admitted, 'duplicate');
    await first.close();
    await second.close();
  });

  it('a key another consumer holds is taken once its lease ends (that consumer died with it)', async () => {
    const store = new TestStore();
    const dead = gate(store, { leaseMs: 40 });
    const alive = gate(store, { leaseMs: 40 });
    assert.equal(await dead.admit('k'), 'claimed');
    assert.equal(await alive.admit('k'), 'claimed');
    await dead.close();
    await alive.close();
  });

  it('a store that fails: down once, what waits is kept, up when it answers, then admitted', async () => {
    const store = new TestStore();
    const g = gate(store);
    const events: string[] = [];
    g.on('down', (why) => events.push(`down: ${why}`));
    g.on('up', () => events.push('up'));
    store.down = 'ECONNREFUSED';
    let admitted: string | undefined;
    void g.admit('k').then((a) => (admitted = a));
    await sleep(20);
    assert.deepEqual(events, ['down: deduplication store test store failed: ECONNREFUSED']);
    assert.equal(g.down, 'deduplication store test store failed: ECONNREFUSED');
    assert.equal(g.downProblem, 'other');
    assert.equal(admitted, undefined, 'never processed blindly');
    store.down = undefined;
    for (let i = 0; i < 100 && admitted === undefined; i += 1) await sleep(5);
    assert.deepEqual(events.slice(1), ['up']);
    assert.equal(admitted, 'claimed');
    await g.close();
  });

  it('an ack waits for its key to be recorded while the store is down', async () => {
    const store = new TestStore();
    const g = gate(store);
    await g.admit('k');
    store.down = 'timeout';
    let recorded = false;
    void g.complete('k').then(() => (recorded = true));
    await sleep(20);
    assert.equal(recorded, false);
    store.down = undefined;
    for (let i = 0; i < 100 && !recorded; i += 1) await sleep(5);
    assert.equal(recorded, true);
    assert.equal(store.records.get('q|k')?.state, 'done');
    await g.close();
  });

  it('with the process policy a store that fails admits unchecked, with a warning', async () => {
    const store = new TestStore();
    const g = gate(store, { storeDown: 'process' });
    const warnings: string[] = [];
    g.on('warning', (w) => warnings.push(w));
    store.down = 'NOAUTH';
    assert.equal(await g.admit('k'), 'unchecked');
    assert.equal(await g.admit('other'), 'unchecked');
    assert.match(warnings.join('\n'), /processing WITHOUT deduplication/);
    await g.close();
  });

  it('a stopping consumer admits nothing more: what waits is let go of', async () => {
    const store = new TestStore();
    const g = gate(store);
    await g.admit('k');
    const waiting = g.admit('k');
    g.endAdmissions();
    assert.equal(await waiting, 'unchecked');
    assert.equal(g.stopped, true);
    await g.close();
  });
});

describe('dedupe gate: waiting copies on the clock (the memory store, a clock of the test)', () => {
  const LEASE = 10_000;
  /** Two consumers on one memory store (two processes on one Redis), on the test's clock. */
  function two(): { timer: FakeTimer; a: DedupeGate; b: DedupeGate; store: MemoryDedupeStore } {
    const timer = new FakeTimer();
    const store = new MemoryDedupeStore({ now: () => timer.now() });
    const make = (): DedupeGate => new DedupeGate({ store, scope: 'q', leaseMs: LEASE, retentionMs: 60_000, storeDown: 'pause', recheckMs: 1000, timer });
    return { timer, a: make(), b: make(), store };
  }
  async function turns(n = 5): Promise<void> {
    for (let i = 0; i < n; i += 1) await nextTurn();
  }
  function track(p: Promise<string>): { value: string | undefined } {
    const box: { value: string | undefined } = { value: undefined };
    void p.then((v) => (box.value = v));
    return box;
  }

  it('a copy held by another consumer is looked at after a second even while a copy here waits for a whole lease (issue 28)', async () => {
    const { timer, a, b } = two();
    assert.equal(await a.admit('stuck'), 'claimed'); // in a flow here that never settles it
    const stuckCopy = track(a.admit('stuck')); // waits for that lease: 10 s
    assert.equal(await b.admit('fast'), 'claimed'); // the other consumer processes it in milliseconds
    const fastCopy = track(a.admit('fast'));
    await turns();
    assert.equal(fastCopy.value, undefined, 'held: the other consumer has it');
    await b.complete('fast');
    timer.advance(1000);
    await turns();
    assert.equal(fastCopy.value, 'duplicate', 'looked at again after one second, not when the 10 s lease ends');
    assert.equal(stuckCopy.value, undefined, 'the copy of the unsettled key still waits');
    timer.advance(LEASE - 1000);
    await turns();
    assert.equal(stuckCopy.value, 'claimed', 'the lease ended unsettled: the waiting copy claims anew');
    await a.close();
    await b.close();
  });

  it('a released key: the copy waiting on it is looked at at once, not when the lease ends', async () => {
    const { timer, a, b } = two();
    assert.equal(await a.admit('k'), 'claimed');
    const copy = track(a.admit('k'));
    await turns();
    assert.deepEqual(timer.armed, [LEASE], 'the copy waits for the lease end at most');
    a.release('k'); // the settle timeout retried it
    await turns();
    assert.equal(copy.value, 'claimed', 'taken over without the clock moving');
    assert.deepEqual(timer.armed, [], 'nothing waits on time any more');
    await a.close();
    await b.close();
  });

  it('a copy behind a key another consumer holds is not admitted beside the first when that lease ends', async () => {
    const { timer, a, b } = two();
    assert.equal(await b.admit('k'), 'claimed'); // b dies with it
    const first = track(a.admit('k'));
    const second = track(a.admit('k'));
    await turns();
    assert.equal(first.value, undefined);
    for (let i = 0; i < 10; i += 1) {
      timer.advance(1000);
      await turns();
    }
    assert.equal(first.value, 'claimed', "b's lease ended: the first copy here claims it");
    assert.equal(second.value, undefined, 'the second waits for the first, whose lease only starts now');
    await a.complete('k');
    await turns();
    assert.equal(second.value, 'duplicate');
    await a.close();
    await b.close();
  });

  it('a store error names the store once (its own words), not twice', async () => {
    const store = new TestStore();
    const failing = Object.assign(store, {
      claim: (): Promise<ClaimResult[]> => Promise.reject(new DedupeStoreError('test store cannot be reached (connection refused)', 'unreachable')),
    });
    const g = new DedupeGate({ store: failing, scope: 'q', leaseMs: 1000, retentionMs: 1000, storeDown: 'pause', probe: { initialMs: 1000, maxMs: 1000 } });
    const down = new Promise<string>((resolve) => g.once('down', resolve));
    void g.admit('k');
    assert.equal(await down, 'deduplication store test store cannot be reached (connection refused)');
    assert.equal(g.downProblem, 'unreachable');
    await g.close();
  });

  it("says what kind of problem took the store down: its table ('schema') is not the database down", async () => {
    const store = new TestStore();
    const failing = Object.assign(store, {
      claim: (): Promise<ClaimResult[]> => Promise.reject(new DedupeStoreError('deduplication table "t": relation "t" does not exist', 'schema')),
    });
    const g = new DedupeGate({ store: failing, scope: 'q', leaseMs: 1000, retentionMs: 1000, storeDown: 'pause', probe: { initialMs: 1000, maxMs: 1000 } });
    const down = new Promise<string>((resolve) => g.once('down', resolve));
    void g.admit('k');
    await down;
    assert.equal(g.downProblem, 'schema');
    await g.close();
  });
});
