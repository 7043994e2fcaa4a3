/**
 * The deduplication store of one Node-RED process: nothing to set up. Bounded by age (a done key is
 * forgotten after the retention, a claim after its lease) and by count (the oldest done records go
 * first when there are more than `maxKeys`; live claims are never dropped).
 */
import { distinctKeys } from './batch';
import type { ClaimResult, DedupeKey, DedupeStore, StoreExchange, SyncDedupeStore } from './store';

interface Entry {
  /** undefined once done. */
  owner: string | undefined;
  /** ms since epoch: the lease's or the retention's end. */
  until: number;
}

export interface MemoryStoreOptions {
  /** Most records kept; default 100 000. */
  maxKeys?: number;
  /** Clock, for tests. */
  now?: () => number;
}

const CLAIMED: ClaimResult = Object.freeze({ state: 'claimed' });
const DONE: ClaimResult = Object.freeze({ state: 'done' });

export class MemoryDedupeStore implements DedupeStore, SyncDedupeStore {
  readonly description = 'memory';
  /** Every call is answered at once: the gate needs no round trip (nor a turn) for it. */
  readonly sync: SyncDedupeStore = this;
  readonly maxKeyBytes = 4096;
  /** Insertion order is age order: a record that changes is moved to the end. */
  private readonly entries = new Map<string, Entry>();
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxKeys = Math.max(1, options.maxKeys ?? 100_000);
    this.now = options.now ?? Date.now;
  }

  /** Records held now (claims and done keys, some possibly expired but not yet swept). */
  get size(): number {
    return this.entries.size;
  }

  prepare(): Promise<void> {
    return Promise.resolve();
  }

  ping(): Promise<void> {
    return Promise.resolve();
  }

  claim(keys: readonly DedupeKey[], owner: string, leaseMs: number): Promise<ClaimResult[]> {
    const { unique, at } = distinctKeys(keys);
    const results = unique.map((k) => this.claimOne(k, owner, leaseMs));
    return Promise.resolve(at.map((i) => results[i] as ClaimResult));
  }

  complete(keys: readonly DedupeKey[], retentionMs: number): Promise<void> {
    for (const k of keys) this.completeOne(k, retentionMs);
    return Promise.resolve();
  }

  release(keys: readonly DedupeKey[], owner: string): Promise<void> {
    for (const k of keys) this.releaseOne(k, owner);
    return Promise.resolve();
  }

  exchange(calls: StoreExchange): Promise<ClaimResult[]> {
    for (const k of calls.complete) this.completeOne(k, calls.retentionMs);
    for (const k of calls.release) this.releaseOne(k, calls.owner);
    return this.claim(calls.claim, calls.owner, calls.leaseMs);
  }

  claimOne(k: DedupeKey, owner: string, leaseMs: number): ClaimResult {
    const now = this.now();
    const id = idOf(k);
    const entry = this.entries.get(id);
    if (entry && entry.until > now) {
      if (entry.owner === undefined) return DONE;
      if (entry.owner !== owner) return { state: 'held', owner: entry.owner, until: entry.until };
    }
    this.put(id, { owner, until: now + leaseMs });
    this.bound(now);
    return CLAIMED;
  }

  completeOne(k: DedupeKey, retentionMs: number): void {
    const now = this.now();
    this.put(idOf(k), { owner: undefined, until: now + retentionMs });
    this.bound(now);
  }

  releaseOne(k: DedupeKey, owner: string): void {
    const id = idOf(k);
    if (this.entries.get(id)?.owner === owner) this.entries.delete(id);
  }

  close(): Promise<void> {
    this.entries.clear();
    return Promise.resolve();
  }

  private put(id: string, entry: Entry): void {
    this.entries.delete(id);
    this.entries.set(id, entry);
  }

  /** Forgets expired records, oldest first, and then the oldest done ones while over the bound. */
  private bound(now: number): void {
    for (const [id, entry] of this.entries) {
      if (this.entries.size <= this.maxKeys && entry.until > now) break;
      if (entry.until <= now || entry.owner === undefined) this.entries.delete(id);
    }
  }
}

function idOf(k: DedupeKey): string {
  return `${k.scope.length}:${k.scope}:${k.key}`;
}
