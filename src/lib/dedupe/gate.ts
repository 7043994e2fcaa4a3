/**
 * The idempotent consumer's gate: a delivery with a key is admitted to the flow only when its key is
 * claimed for this consumer (with a lease), and is a duplicate when the store says it was processed.
 * A duplicate of a key this consumer is still processing (or another consumer holds) waits: it is
 * looked at again when the first settles here, or every `recheckMs` until the other's lease ends. The
 * key is completed (recorded as processed) before the ack goes to the broker, and released on a retry
 * or a park, so the next delivery is processed again.
 *
 * Store calls are batched: the claims, completes and releases of one event-loop turn go out as one
 * call each. A store that fails never means processing blindly: with `storeDown: 'pause'` the gate
 * says `down` (the consumer stops taking messages), keeps what waits, probes the store with capped
 * backoff and says `up` when it answers again; with `'process'` deliveries are admitted unchecked,
 * with a warning.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ClaimResult, DedupeKey, DedupeStore } from './store';

export type StoreDownPolicy = 'pause' | 'process';

/** A delivery's deduplication key: found, missing (no messageId, an empty property), or unusable (and why). */
export type DedupeKeyResult = { key: string } | { missing: true } | { problem: string };

export interface DedupeGateOptions {
  store: DedupeStore;
  /** Records are per scope (the consumer's main queue): the same key on another queue is another record. */
  scope: string;
  /** How long a claim lives without being completed or released. */
  leaseMs: number;
  /** How long a processed key is remembered. */
  retentionMs: number;
  storeDown: StoreDownPolicy;
  /** How often a key another consumer holds is looked at again; default 1 s. */
  recheckMs?: number;
  /** Probing a store that is down: first and longest pause; defaults 1 s and 30 s. */
  probe?: { initialMs: number; maxMs: number };
}

/**
 * What becomes of a delivery: `claimed` (process it), `duplicate` (processed before: ack it, do not
 * process it), `unchecked` (the store is down and the policy says process anyway).
 */
export type Admission = 'claimed' | 'duplicate' | 'unchecked';

export interface DedupeGateEvents {
  /** The store failed: why, in words naming it. With the `pause` policy the consumer should stop taking messages. */
  down: [string];
  /** The store answers again. */
  up: [];
  warning: [string];
}

interface Waiter {
  resolve: (admission: Admission) => void;
}

/** A key this consumer holds (claimed, not yet completed or released), and what waits for it here. */
interface LocalKey {
  waiters: Waiter[];
  /** When the claim's lease ends (ms since epoch): a waiter may claim anew then. */
  until: number;
}

interface Claiming {
  key: string;
  resolve: (admission: Admission) => void;
  /** When to ask the store again while another consumer holds the key. */
  nextCheck: number;
}

export class DedupeGate extends EventEmitter<DedupeGateEvents> {
  /** Names this consumer's claims in the store: readable, and new for every consumer start. */
  readonly owner = `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
  private readonly local = new Map<string, LocalKey>();
  /** Waiting for the next claim call (new, or looked at again). */
  private claims: Claiming[] = [];
  /** Another consumer holds these keys: asked again at `nextCheck`. */
  private readonly held = new Set<Claiming>();
  private completes: Array<{ key: string; resolve: () => void }> = [];
  private releases: string[] = [];
  private scheduled = false;
  private recheckTimer: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private probeAttempt = 0;
  private downWhy: string | undefined;
  /** No more admissions (the consumer stops). */
  private closed = false;
  /** Closed for good: no probing either. */
  private shut = false;
  private readonly recheckMs: number;

  constructor(private readonly options: DedupeGateOptions) {
    super();
    this.recheckMs = options.recheckMs ?? 1000;
  }

  /** Why the store is down, while it is. */
  get down(): string | undefined {
    return this.downWhy;
  }

  /** Deliveries waiting for a key (held by another delivery or consumer, or for the store to come back). */
  get waiting(): number {
    let n = this.claims.length + this.held.size;
    for (const local of this.local.values()) n += local.waiters.length;
    return n;
  }

  /** Whether a delivery with this key may be processed now; resolves when that is known. */
  admit(key: string): Promise<Admission> {
    if (this.closed) return Promise.resolve('unchecked');
    const local = this.local.get(key);
    if (local) {
      // This consumer is processing the key now (another copy, or the same message redelivered after a
      // lost channel): wait for it to settle, or for its lease to end (a flow that never settles it).
      return new Promise((resolve) => {
        local.waiters.push({ resolve });
        this.armRecheck();
      });
    }
    if (this.downWhy !== undefined && this.options.storeDown === 'process') return Promise.resolve('unchecked');
    this.local.set(key, { waiters: [], until: Date.now() + this.options.leaseMs });
    return new Promise((resolve) => this.queueClaim({ key, resolve, nextCheck: 0 }));
  }

  /** The flow acked the delivery of a key: records it as processed; resolves once the store has it (then the ack may go). */
  complete(key: string): Promise<void> {
    return new Promise((resolve) => {
      this.completes.push({ key, resolve });
      this.schedule();
    });
  }

  /** The delivery of a key was retried or parked (or never settled): the next delivery may process it. */
  release(key: string): void {
    const local = this.local.get(key);
    const next = this.closed ? undefined : local?.waiters.shift();
    if (local && next) {
      // A copy waits here: it takes over the claim (still this consumer's), with a fresh lease.
      local.until = Date.now() + this.options.leaseMs;
      this.claims.push({ key, resolve: next.resolve, nextCheck: 0 });
      this.schedule();
      return;
    }
    this.local.delete(key);
    this.releases.push(key);
    this.schedule();
  }

  /**
   * The consumer stops: nothing more is admitted, and what waits is let go of (resolved `unchecked`
   * with `stopped` set: the caller does not process it; it goes back to the queue with its channel).
   * Completes and releases still go out until {@link close}.
   */
  endAdmissions(): void {
    this.closed = true;
    clearTimeout(this.recheckTimer);
    const waiting = [...this.claims, ...this.held];
    this.claims = [];
    this.held.clear();
    for (const claim of waiting) this.local.delete(claim.key);
    for (const local of this.local.values()) for (const waiter of local.waiters.splice(0)) waiter.resolve('unchecked');
    for (const claim of waiting) claim.resolve('unchecked');
  }

  /** Whether the gate no longer admits (the consumer stops): a delivery it let go of is not processed. */
  get stopped(): boolean {
    return this.closed;
  }

  /** Writes the completes and releases still pending (once, best effort), then stops probing. */
  async close(): Promise<void> {
    this.endAdmissions();
    this.shut = true;
    if (this.downWhy === undefined && (this.completes.length > 0 || this.releases.length > 0)) await this.flush();
    clearTimeout(this.probeTimer);
    for (const complete of this.completes.splice(0)) complete.resolve();
    this.releases = [];
  }

  private queueClaim(claim: Claiming): void {
    this.claims.push(claim);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.downWhy !== undefined) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private keys(names: readonly string[]): DedupeKey[] {
    return names.map((key) => ({ scope: this.options.scope, key }));
  }

  /** One call per kind for what this turn collected. */
  private async flush(): Promise<void> {
    const { store, leaseMs, retentionMs } = this.options;
    const claims = this.claims;
    const completes = this.completes;
    const releases = this.releases;
    this.claims = [];
    this.completes = [];
    this.releases = [];
    const calls: Array<Promise<void>> = [];
    if (completes.length > 0) {
      calls.push(
        store.complete(this.keys(completes.map((c) => c.key)), retentionMs).then(
          () => {
            for (const c of completes) this.completed(c.key, c.resolve);
          },
          (err: unknown) => {
            this.completes.unshift(...completes);
            this.failed(err);
          },
        ),
      );
    }
    if (releases.length > 0) {
      calls.push(
        store.release(this.keys(releases), this.owner).catch((err: unknown) => {
          this.releases.unshift(...releases);
          this.failed(err);
        }),
      );
    }
    if (claims.length > 0) {
      calls.push(
        store.claim(this.keys(claims.map((c) => c.key)), this.owner, leaseMs).then(
          (results) => claims.forEach((claim, i) => this.claimed(claim, results[i])),
          (err: unknown) => {
            this.claims.unshift(...claims);
            this.failed(err);
          },
        ),
      );
    }
    await Promise.all(calls);
    if (this.downWhy === undefined && this.probeAttempt > 0) this.probeAttempt = 0;
  }

  private claimed(claim: Claiming, result: ClaimResult | undefined): void {
    if (this.closed) return claim.resolve('unchecked');
    switch (result?.state) {
      case 'claimed':
        claim.resolve('claimed');
        return;
      case 'done':
        this.finish(claim.key, 'duplicate');
        claim.resolve('duplicate');
        return;
      case 'held': {
        // Another consumer processes it: look again soon, and at the latest when its lease ends.
        claim.nextCheck = Math.min(result.until, Date.now() + this.recheckMs);
        this.held.add(claim);
        this.armRecheck();
        return;
      }
      default:
        this.failed(new Error(`the store gave no answer for key '${claim.key}'`));
        this.claims.push(claim);
    }
  }

  private completed(key: string, resolve: () => void): void {
    this.finish(key, 'duplicate');
    resolve();
  }

  /** A key is settled for good here: what waited for it is a duplicate (processed) and is told so. */
  private finish(key: string, admission: Admission): void {
    const local = this.local.get(key);
    this.local.delete(key);
    for (const waiter of local?.waiters ?? []) waiter.resolve(admission);
  }

  /** One timer for what waits on time: keys another consumer holds, and local keys whose lease ends with copies waiting. */
  private armRecheck(): void {
    if (this.recheckTimer !== undefined || this.closed) return;
    let next = Infinity;
    for (const claim of this.held) next = Math.min(next, claim.nextCheck);
    for (const local of this.local.values()) if (local.waiters.length > 0) next = Math.min(next, local.until);
    if (next === Infinity) return;
    this.recheckTimer = setTimeout(() => {
      this.recheckTimer = undefined;
      const now = Date.now();
      for (const claim of this.held) {
        if (claim.nextCheck > now) continue;
        this.held.delete(claim);
        this.claims.push(claim);
      }
      for (const [key, local] of this.local) {
        const next = local.until <= now ? local.waiters.shift() : undefined;
        if (!next) continue;
        // Its lease ended and it was never settled here (a flow that dropped the msg): a waiting copy claims anew.
        local.until = now + this.options.leaseMs;
        this.claims.push({ key, resolve: next.resolve, nextCheck: 0 });
      }
      this.schedule();
      this.armRecheck();
    }, Math.max(0, next - Date.now()));
    this.recheckTimer.unref?.();
  }

  private failed(err: unknown): void {
    const why = `deduplication store ${this.options.store.description} failed: ${err instanceof Error ? err.message : String(err)}`;
    if (this.downWhy !== undefined) return;
    this.downWhy = why;
    this.emit('down', why);
    if (this.options.storeDown === 'process') {
      // Processing goes on without deduplication: what waits for a claim is admitted unchecked.
      this.emit('warning', `${why}: processing WITHOUT deduplication until it answers again (duplicates are possible meanwhile)`);
      for (const claim of this.claims.splice(0)) {
        this.local.delete(claim.key);
        claim.resolve('unchecked');
      }
      for (const complete of this.completes.splice(0)) complete.resolve();
      this.releases = [];
    }
    this.probe();
  }

  /** Asks the store until it answers, pausing longer each time (capped). */
  private probe(): void {
    if (this.shut) return;
    const { initialMs, maxMs } = this.options.probe ?? { initialMs: 1000, maxMs: 30_000 };
    const delay = Math.min(maxMs, initialMs * 2 ** this.probeAttempt);
    this.probeAttempt += 1;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      this.options.store.ping().then(
        () => {
          if (this.shut) return;
          this.downWhy = undefined;
          this.probeAttempt = 0;
          this.emit('up');
          this.schedule();
        },
        () => this.probe(),
      );
    }, delay);
    this.probeTimer.unref?.();
  }
}
