/**
 * The gate's store calls, batched: the claims, completes and releases of one event-loop turn go out
 * together — as one round trip when the store has `exchange` (the completes of one turn carried with
 * the claims of the next), as one call per kind otherwise. Up to {@link MAX_IN_FLIGHT} calls are in
 * flight at once; what comes meanwhile waits and goes as one bigger call when one answers. A claim
 * never passes a write of its key (`exchange-plan.ts`). A call that fails keeps its keys for the next
 * flush and says so; while the store is down nothing goes out.
 */
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
}

interface Complete {
  key: string;
  resolve: () => void;
}

export class StoreBatch<C extends { key: string }> {
  private claims: C[] = [];
  private completes: Complete[] = [];
  private releases: string[] = [];
  private scheduled = false;
  private inFlight = 0;
  /** Keys with a complete or release in a call in flight (how many such calls). */
  private readonly writesInFlight = new Map<string, number>();

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
    return this.completes.length > 0 || this.releases.length > 0;
  }

  claim(claim: C): void {
    this.claims.push(claim);
    this.schedule();
  }

  /** Resolves once the store has the key as processed. */
  complete(key: string): Promise<void> {
    return new Promise((resolve) => {
      this.completes.push({ key, resolve });
      this.schedule();
    });
  }

  release(key: string): void {
    this.releases.push(key);
    this.schedule();
  }

  /** Takes the claims waiting for a call off (the caller answers them otherwise). */
  takeClaims(): C[] {
    return this.claims.splice(0);
  }

  /** Gives up what waits to be written: completes resolve unwritten, releases are dropped (their claims end with their lease). */
  dropWrites(): void {
    for (const complete of this.completes.splice(0)) complete.resolve();
    this.releases = [];
  }

  /** A call at the end of this turn, unless the store is down (or enough calls are in flight: one that answers sends it). */
  schedule(): void {
    if (this.scheduled || this.handlers.paused()) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.inFlight < MAX_IN_FLIGHT) void this.flush();
    });
  }

  /** One call (or one per kind) for what waits; resolves when it answered. */
  async flush(): Promise<void> {
    const completes = this.completes;
    const completed = completes.map((c) => c.key);
    const plan = planExchange(this.claims, completed, this.releases, this.writesInFlight);
    this.claims = plan.deferred;
    this.completes = [];
    this.releases = [];
    const { claims, releases } = plan;
    if (claims.length === 0 && completes.length === 0 && releases.length === 0) return;
    const written = [...completed, ...releases];
    for (const key of written) this.writesInFlight.set(key, (this.writesInFlight.get(key) ?? 0) + 1);
    this.inFlight += 1;
    try {
      const exchange = this.store.exchange?.bind(this.store);
      if (exchange) await this.exchange(exchange, claims, completes, completed, releases);
      else await this.separately(claims, completes, releases);
    } finally {
      this.inFlight -= 1;
      for (const key of written) {
        const n = (this.writesInFlight.get(key) ?? 1) - 1;
        if (n > 0) this.writesInFlight.set(key, n);
        else this.writesInFlight.delete(key);
      }
      if (this.claims.length > 0 || this.writing) this.schedule();
    }
  }

  /** One round trip: the completes, the releases, then the claims. */
  private async exchange(exchange: NonNullable<DedupeStore['exchange']>, claims: C[], completes: Complete[], completed: readonly string[], releases: string[]): Promise<void> {
    const { terms, handlers } = this;
    let results: ClaimResult[];
    try {
      results = await exchange({
        complete: this.keys(completed),
        retentionMs: terms.retentionMs,
        release: this.keys(releases),
        claim: this.keys(claims.map((c) => c.key)),
        owner: terms.owner,
        leaseMs: terms.leaseMs,
      });
    } catch (err) {
      this.putBack(claims, completes, releases);
      handlers.failed(err);
      return;
    }
    this.recorded(completes);
    claims.forEach((claim, i) => handlers.claimed(claim, results[i]));
  }

  /** A store without `exchange`: one call per kind, at once. */
  private async separately(claims: C[], completes: Complete[], releases: string[]): Promise<void> {
    const { store, terms, handlers } = this;
    const calls: Array<Promise<void>> = [];
    if (completes.length > 0) {
      calls.push(
        store.complete(this.keys(completes.map((c) => c.key)), terms.retentionMs).then(
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
          this.putBack([], [], releases);
          handlers.failed(err);
        }),
      );
    }
    if (claims.length > 0) {
      calls.push(
        store.claim(this.keys(claims.map((c) => c.key)), terms.owner, terms.leaseMs).then(
          (results) => claims.forEach((claim, i) => handlers.claimed(claim, results[i])),
          (err: unknown) => {
            this.putBack(claims, [], []);
            handlers.failed(err);
          },
        ),
      );
    }
    await Promise.all(calls);
  }

  private recorded(completes: readonly Complete[]): void {
    for (const c of completes) {
      this.handlers.completed(c.key);
      c.resolve();
    }
  }

  /** A call that failed: its work goes first in the next one. */
  private putBack(claims: C[], completes: Complete[], releases: string[]): void {
    this.claims.unshift(...claims);
    this.completes.unshift(...completes);
    this.releases.unshift(...releases);
  }

  private keys(names: readonly string[]): DedupeKey[] {
    return names.map((key) => ({ scope: this.terms.scope, key }));
  }
}
