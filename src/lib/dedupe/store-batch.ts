/**
 * The gate's store calls, batched: the claims, completes and releases of one event-loop turn go out
 * as one call each (one round trip, the way acks are batched). A call that fails keeps its keys for
 * the next flush and says so; while the store is down nothing goes out.
 */
import type { ClaimResult, DedupeKey, DedupeStore } from './store';

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

export class StoreBatch<C extends { key: string }> {
  private claims: C[] = [];
  private completes: Array<{ key: string; resolve: () => void }> = [];
  private releases: string[] = [];
  private scheduled = false;

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

  /** A flush at the end of this turn, unless the store is down. */
  schedule(): void {
    if (this.scheduled || this.handlers.paused()) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** One call per kind for what this turn collected; resolves when all have answered. */
  async flush(): Promise<void> {
    const { store, terms, handlers } = this;
    const { claims, completes, releases } = this;
    this.claims = [];
    this.completes = [];
    this.releases = [];
    const calls: Array<Promise<void>> = [];
    if (completes.length > 0) {
      calls.push(
        store.complete(this.keys(completes.map((c) => c.key)), terms.retentionMs).then(
          () => {
            for (const c of completes) {
              handlers.completed(c.key);
              c.resolve();
            }
          },
          (err: unknown) => {
            this.completes.unshift(...completes);
            handlers.failed(err);
          },
        ),
      );
    }
    if (releases.length > 0) {
      calls.push(
        store.release(this.keys(releases), terms.owner).catch((err: unknown) => {
          this.releases.unshift(...releases);
          handlers.failed(err);
        }),
      );
    }
    if (claims.length > 0) {
      calls.push(
        store.claim(this.keys(claims.map((c) => c.key)), terms.owner, terms.leaseMs).then(
          (results) => claims.forEach((claim, i) => handlers.claimed(claim, results[i])),
          (err: unknown) => {
            this.claims.unshift(...claims);
            handlers.failed(err);
          },
        ),
      );
    }
    await Promise.all(calls);
  }

  private keys(names: readonly string[]): DedupeKey[] {
    return names.map((key) => ({ scope: this.terms.scope, key }));
  }
}
