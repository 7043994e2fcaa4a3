/**
 * The gate's store calls, batched: the claims, completes and releases of one event-loop turn go out
 * together — as one round trip when the store has `exchange` (the completes of one turn carried with
 * the claims of the next), as one call per kind otherwise. Up to {@link MAX_IN_FLIGHT} calls (or the
 * store's own `maxInFlight`) are in flight at once; what comes meanwhile waits and goes as one bigger
 * call when one answers. A claim never passes a write of its key (`exchange-plan.ts`). A call that
 * fails keeps its keys for the next flush and says so; while the store is down nothing goes out.
 * With a claim window (a consumer in batch mode), claims wait until a batch's worth of them is here or
 * the window's wait ran out, and go as one call: one statement per batch, not one per turn of deliveries.
 */
import { Dictionary } from '../collections';
import { planExchange } from './exchange-plan';
import type { ClaimResult, DedupeKey, DedupeStore } from './store';

/** Calls in flight at once: more turns' work waits and goes in one call. */
export const MAX_IN_FLIGHT = 4;

export interface StoreBatchHandlers<C> {
  /** The store's answer for one claim (undefined: it gave none). */
  claimed(claim: C, result: ClaimResult | undefined): void;
  /** A key is recorded as processed (before the complete's promise resolves). */
  completed(key: string): void;
  failed(err: unknown): void;
  /** The store is down: calls wait. */
  paused(): boolean;
}

export interface StoreBatchTerms {
  scope: string;
  owner: string;
  leaseMs: number;
  retentionMs: number;
  /** Claims gathered into one call: `size` of them, or what came within `waitMs` of the first (completes and releases go each turn). */
  claimWindow?: { size: number; waitMs: number };
}

/** Completes: their keys, and for each what is called once it is recorded (two arrays: no object per complete). */
interface Completes {
  keys: string[];
  recorded: Array<() => void>;
}

const noCompletes = (): Completes => ({ keys: [], recorded: [] });

export class StoreBatch<C extends { key: string }> {
  private claims: C[] = [];
  private completes: Completes = noCompletes();
  private releases: string[] = [];
  private scheduled = false;
  private inFlight = 0;
  /** The claim window's wait: armed by the first claim it holds; `windowDue` once it ran out. */
  private windowTimer: NodeJS.Timeout | undefined;
  private windowDue = false;
  /**
   * Answers are taken in the order the calls went out: `sent` numbers each exchange, `taken` is the
   * number of the next to take. Calls on a pool of connections may answer out of order; taken in
   * order, the acks of recorded completes stay ascending and go to the broker as one multiple frame,
   * not one frame each above a delivery still waiting (measured on PostgreSQL: 0.08 settle frames per
   * message out of order, 0.03 in order). An answer that comes early waits in `early`; one in order
   * (always, on one connection) is taken at once, with nothing kept.
   */
  private sent = 0;
  private taken = 0;
  private readonly early = new Map<number, () => void>();
  /** Keys with a complete or release in a call in flight (how many such calls). */
  private readonly writesInFlight = new Dictionary<number>(); // a Map renewed now and then: see collections/renewal.ts

  constructor(
    private readonly store: DedupeStore,
    private readonly terms: StoreBatchTerms,
    private readonly handlers: StoreBatchHandlers<C>,
  ) {}

  /** Claims waiting for the next call. */
  get claiming(): number {
    return this.claims.length;
  }

  /** Completes or releases waiting for the next call. */
  get writing(): boolean {
    return this.completes.keys.length > 0 || this.releases.length > 0;
  }

  claim(claim: C): void {
    this.claims.push(claim);
    this.schedule();
  }

  /** `recorded` is called once the store has the key as processed (it must not throw). */
  complete(key: string, recorded: () => void): void {
    this.completes.keys.push(key);
    this.completes.recorded.push(recorded);
    this.schedule();
  }

  release(key: string): void {
    this.releases.push(key);
    this.schedule();
  }

  /** Takes the claims waiting for a call off (the caller answers them otherwise). */
  takeClaims(): C[] {
    this.closeWindow();
    return this.claims.splice(0);
  }

  /** Gives up what waits to be written: completes resolve unwritten, releases are dropped (their claims end with their lease). */
  dropWrites(): void {
    const { recorded } = this.completes;
    this.completes = noCompletes();
    this.releases = [];
    for (const done of recorded) done();
  }

  /** A call at the end of this turn, unless the store is down (or enough calls are in flight: one that answers sends it). */
  schedule(): void {
    if (this.scheduled || this.handlers.paused()) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.inFlight < (this.store.maxInFlight ?? MAX_IN_FLIGHT)) void this.flush();
    });
  }

  /** One call (or one per kind) for what waits; resolves when it answered. */
  async flush(): Promise<void> {
    const { completes } = this;
    const completed = completes.keys;
    const ready = this.claimsReady();
    const plan = planExchange(ready ? this.claims : [], completed, this.releases, this.writesInFlight);
    if (ready) this.claims = plan.deferred;
    this.completes = noCompletes();
    this.releases = [];
    const { claims, releases } = plan;
    if (claims.length === 0 && completed.length === 0 && releases.length === 0) return;
    this.writes(completed, 1);
    this.writes(releases, 1);
    this.inFlight += 1;
    try {
      const exchange = this.store.exchange?.bind(this.store);
      if (exchange) await this.exchange(exchange, claims, completes, releases);
      else await this.separately(claims, completes, releases);
    } finally {
      this.inFlight -= 1;
      this.writes(completed, -1);
      this.writes(releases, -1);
      if (this.claims.length > 0 || this.writing) this.schedule();
    }
  }

  /** Whether the waiting claims go in this call: always without a claim window; with one, once it is full or its wait ran out. */
  private claimsReady(): boolean {
    const window = this.terms.claimWindow;
    if (window === undefined || this.claims.length === 0) return true;
    if (this.claims.length >= window.size || this.windowDue) {
      this.closeWindow();
      return true;
    }
    this.windowTimer ??= setTimeout(() => {
      this.windowTimer = undefined;
      this.windowDue = true;
      this.schedule();
    }, window.waitMs);
    return false;
  }

  /** The claim window's wait, over (its claims go, or were taken off). */
  private closeWindow(): void {
    clearTimeout(this.windowTimer);
    this.windowTimer = undefined;
    this.windowDue = false;
  }

  /** Counts writes of keys in flight (`by` 1: sent, -1: answered). */
  private writes(keys: readonly string[], by: 1 | -1): void {
    const counts = this.writesInFlight;
    for (const key of keys) {
      const n = (counts.get(key) ?? 0) + by;
      if (n > 0) counts.set(key, n);
      else counts.delete(key);
    }
  }

  /** One round trip: the completes, the releases, then the claims. */
  private async exchange(exchange: NonNullable<DedupeStore['exchange']>, claims: C[], completes: Completes, releases: string[]): Promise<void> {
    const { terms } = this;
    const turn = this.sent;
    this.sent += 1;
    let results: ClaimResult[] | undefined;
    let failure: { err: unknown } | undefined;
    try {
      results = await exchange({
        complete: this.keys(completes.keys),
        retentionMs: terms.retentionMs,
        release: this.keys(releases),
        claim: this.claimKeys(claims),
        owner: terms.owner,
        leaseMs: terms.leaseMs,
      });
    } catch (err) {
      failure = { err };
    }
    if (turn !== this.taken) {
      // A call sent before it has not answered yet: this answer waits for its turn.
      this.early.set(turn, () => this.answered(results, failure, claims, completes, releases));
      return;
    }
    this.answered(results, failure, claims, completes, releases);
    this.taken += 1;
    // The answers that came before this one, now in their turn.
    for (let next = this.early.get(this.taken); next !== undefined; next = this.early.get(this.taken)) {
      this.early.delete(this.taken);
      next();
      this.taken += 1;
    }
  }

  /** An exchange's answer, taken in its turn: claims answered and completes recorded, or its work kept for the next call. */
  private answered(results: ClaimResult[] | undefined, failure: { err: unknown } | undefined, claims: C[], completes: Completes, releases: string[]): void {
    const { handlers } = this;
    if (failure !== undefined || results === undefined) {
      this.putBack(claims, completes, releases);
      handlers.failed(failure?.err);
      return;
    }
    this.recorded(completes);
    for (let i = 0; i < claims.length; i += 1) handlers.claimed(claims[i] as C, results[i]);
  }

  /** A store without `exchange`: one call per kind, at once. */
  private async separately(claims: C[], completes: Completes, releases: string[]): Promise<void> {
    const { store, terms, handlers } = this;
    const calls: Array<Promise<void>> = [];
    if (completes.keys.length > 0) {
      calls.push(
        store.complete(this.keys(completes.keys), terms.retentionMs).then(
          () => this.recorded(completes),
          (err: unknown) => {
            this.putBack([], completes, []);
            handlers.failed(err);
          },
        ),
      );
    }
    if (releases.length > 0) {
      calls.push(
        store.release(this.keys(releases), terms.owner).catch((err: unknown) => {
          this.putBack([], noCompletes(), releases);
          handlers.failed(err);
        }),
      );
    }
    if (claims.length > 0) {
      calls.push(
        store.claim(this.claimKeys(claims), terms.owner, terms.leaseMs).then(
          (results) => claims.forEach((claim, i) => handlers.claimed(claim, results[i])),
          (err: unknown) => {
            this.putBack(claims, noCompletes(), []);
            handlers.failed(err);
          },
        ),
      );
    }
    await Promise.all(calls);
  }

  private recorded(completes: Completes): void {
    const { keys, recorded } = completes;
    for (let i = 0; i < keys.length; i += 1) {
      this.handlers.completed(keys[i] as string);
      (recorded[i] as () => void)();
    }
  }

  /** A call that failed: its work goes first in the next one. */
  private putBack(claims: C[], completes: Completes, releases: string[]): void {
    this.claims.unshift(...claims);
    this.completes.keys.unshift(...completes.keys);
    this.completes.recorded.unshift(...completes.recorded);
    this.releases.unshift(...releases);
  }

  private keys(names: readonly string[]): DedupeKey[] {
    const { scope } = this.terms;
    const keys = new Array<DedupeKey>(names.length);
    for (let i = 0; i < names.length; i += 1) keys[i] = { scope, key: names[i] as string };
    return keys;
  }

  private claimKeys(claims: readonly C[]): DedupeKey[] {
    const { scope } = this.terms;
    const keys = new Array<DedupeKey>(claims.length);
    for (let i = 0; i < claims.length; i += 1) keys[i] = { scope, key: (claims[i] as C).key };
    return keys;
  }
}
