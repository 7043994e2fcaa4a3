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

/** A mask: expired records are swept every 256 writes (and at once when over the bound). */
const SWEEP_EVERY = 255;
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
  /** Records written: expired ones are swept every {@link SWEEP_EVERY}+1 writes. */
  private writes = 0;
  /** Where the sweep goes on from, and the record it stopped at. */
  private cursor: Iterator<[string, Entry]> | undefined;
  private head: [string, Entry] | undefined;
  /** The scope of the last record id made, and its part of the id (a gate keeps one scope). */
  private lastScope: string | undefined;
  private scopePart = '';

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
    const id = this.idOf(k);
    const entry = this.entries.get(id);
    if (entry && entry.until > now) {
      if (entry.owner === undefined) return DONE;
      if (entry.owner !== owner) return { state: 'held', owner: entry.owner, until: entry.until };
    }
    this.put(id, entry !== undefined, owner, now + leaseMs);
    return CLAIMED;
  }

  completeOne(k: DedupeKey, retentionMs: number): void {
    const id = this.idOf(k);
    this.put(id, this.entries.has(id), undefined, this.now() + retentionMs);
  }

  releaseOne(k: DedupeKey, owner: string): void {
    const id = this.idOf(k);
    if (this.entries.get(id)?.owner === owner) this.entries.delete(id);
  }

  close(): Promise<void> {
    this.entries.clear();
    this.cursor = undefined;
    this.head = undefined;
    return Promise.resolve();
  }

  /** A record's id: the scope's length and the scope, then the key (no two scopes and keys make one id). */
  private idOf(k: DedupeKey): string {
    if (k.scope !== this.lastScope) {
      this.lastScope = k.scope;
      this.scopePart = `${k.scope.length}:${k.scope}:`;
    }
    return this.scopePart + k.key;
  }

  /** A record, new or changed (then moved to the end, a new entry: it is the youngest). */
  private put(id: string, had: boolean, owner: string | undefined, until: number): void {
    if (had) this.entries.delete(id);
    this.entries.set(id, { owner, until });
    this.writes += 1;
    // Over the bound at once; expired records now and then (an expired one is never answered from).
    if (this.entries.size > this.maxKeys || (this.writes & SWEEP_EVERY) === 0) this.bound(this.now());
  }

  /**
   * Forgets expired records, oldest first, and then the oldest done ones while over the bound. One
   * iterator goes on from where it stopped (a Map iterator survives changes): starting one from the
   * front each time would step again over every record deleted there, a cost that grows with the map.
   */
  private bound(now: number): void {
    for (;;) {
      if (!this.head) {
        const next = (this.cursor ??= this.entries.entries()).next();
        if (next.done === true) {
          this.cursor = undefined; // at the end: the next sweep starts from the front again
          return;
        }
        this.head = next.value;
      }
      const [id, entry] = this.head;
      if (this.entries.get(id) === entry) {
        if (this.entries.size <= this.maxKeys && entry.until > now) return;
        if (entry.until <= now || entry.owner === undefined) this.entries.delete(id);
      }
      // Gone or moved (a changed record is a new entry at the end), deleted, or a live claim kept: the next one.
      this.head = undefined;
    }
  }
}
