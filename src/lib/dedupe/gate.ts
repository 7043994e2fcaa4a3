/**
 * The idempotent consumer's gate: a delivery with a key is admitted to the flow only when its key is
 * claimed for this consumer (with a lease), and is a duplicate when the store says it was processed.
 * A duplicate of a key this consumer is still processing (or another consumer holds) waits: it is
 * looked at again at once when the first settles here (the keys held here and their copies:
 * `local-keys.ts`), or every `recheckMs` until the other's lease ends (one schedule for all of them,
 * armed for the earliest: `recheck.ts`). The key is completed
 * (recorded as processed) before the ack goes to the broker, and released on a retry or a park (or
 * when the settle timeout ends its delivery), so the next delivery is processed again.
 *
 * Store calls are batched: the claims, completes and releases of one event-loop turn go out as one
 * round trip, several in flight (`store-batch.ts`); a store that answers at once (memory) is called
 * in the same turn. A store that fails never means processing blindly: with `storeDown: 'pause'` the gate
 * says `down` (the consumer stops taking messages), keeps what waits, probes the store with capped
 * backoff and says `up` when it answers again; with `'process'` deliveries are admitted unchecked,
 * with a warning.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { LocalKeys, type LocalKey, type Waiter } from './local-keys';
import { StoreProbe } from './probe';
import { RecheckSchedule, systemTimer, type Timer } from './recheck';
import { StoreBatch } from './store-batch';
import { DedupeStoreError, type ClaimResult, type DedupeKey, type DedupeStoreProblem, type SyncDedupeStore } from './store';
import type { Admission, DedupeGateEvents, DedupeGateOptions } from './gate-terms';

export type { Admission, DedupeGateEvents, DedupeGateOptions, DedupeKeyResult, StoreDownPolicy } from './gate-terms';

interface Claiming {
  key: string;
  resolve: Waiter;
  /** When to ask the store again while another consumer holds the key. */
  nextCheck: number;
}

const claiming = (key: string, resolve: Waiter): Claiming => ({ key, resolve, nextCheck: 0 });

export class DedupeGate extends EventEmitter<DedupeGateEvents> {
  /** Names this consumer's claims in the store: readable, and new for every consumer start. */
  readonly owner = `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
  /** The keys this consumer holds, and the copies waiting here for them. */
  private readonly local: LocalKeys;
  /** The store calls of this turn: claims (new, or looked at again), completes, releases. */
  private readonly calls: StoreBatch<Claiming>;
  /** Another consumer holds these keys: asked again at `nextCheck`. */
  private readonly held = new Set<Claiming>();
  /** What waits on time: held keys (at `nextCheck`), local keys with copies waiting (at `until`). */
  private readonly rechecks: RecheckSchedule<Claiming | LocalKey>;
  private readonly probe: StoreProbe;
  private downWhy: string | undefined;
  /** What kind of problem took the store down (a store's own error says; anything else is `other`). */
  private downKind: DedupeStoreProblem | undefined;
  /** No more admissions (the consumer stops). */
  private closed = false;
  /** Closed for good: no probing either. */
  private shut = false;
  private readonly recheckMs: number;
  private readonly timer: Timer;
  /** A store that answers at once (memory): claims, completes and releases without a call or a turn. */
  private readonly sync: SyncDedupeStore | undefined;

  constructor(private readonly options: DedupeGateOptions) {
    super();
    this.recheckMs = options.recheckMs ?? 1000;
    this.timer = options.timer ?? systemTimer;
    this.sync = options.store.sync;
    this.rechecks = new RecheckSchedule((items) => this.recheck(items), this.timer);
    this.local = new LocalKeys(this.rechecks);
    this.probe = new StoreProbe(() => options.store.ping(), () => this.storeUp(), options.probe);
    const { scope, leaseMs, retentionMs, claimWindow } = options;
    this.calls = new StoreBatch(
      options.store,
      { scope, owner: this.owner, leaseMs, retentionMs, claimWindow },
      {
        claimed: (claim, result) => this.claimed(claim, result),
        completed: (key) => this.local.finish(key, 'duplicate'),
        failed: (err) => this.failed(err),
        paused: () => this.downWhy !== undefined,
      },
    );
  }

  /** Why the store is down, while it is. */
  get down(): string | undefined {
    return this.downWhy;
  }

  /** What is wrong with the store, while it is down (`schema`: its table, not the database). */
  get downProblem(): DedupeStoreProblem | undefined {
    return this.downKind;
  }

  /** Deliveries waiting for a key (held by another delivery or consumer, or for the store to come back). */
  get waiting(): number {
    return this.calls.claiming + this.held.size + this.local.waiting;
  }

  /** Whether a delivery with this key may be processed now; resolves when that is known. */
  admit(key: string): Promise<Admission> {
    return new Promise((resolve) => {
      const now = this.admitOr(key, resolve);
      if (now !== undefined) resolve(now);
    });
  }

  /**
   * {@link admit} without a promise: the admission when it is known at once (a store that answers at
   * once, a gate that admits unchecked); otherwise undefined, and `later` is called with it once it
   * is known (from inside the gate: it must not throw).
   */
  admitOr(key: string, later: (admission: Admission) => void): Admission | undefined {
    if (this.closed) return 'unchecked';
    const local = this.local.get(key);
    if (local) {
      // This consumer is processing the key now (another copy, or the same message redelivered after a
      // lost channel): wait for it to settle, or for its lease to end (a flow that never settles it).
      this.local.wait(local, later);
      return undefined;
    }
    if (this.downWhy !== undefined && this.options.storeDown === 'process') return 'unchecked';
    this.local.add(key);
    const { sync } = this;
    if (sync && this.downWhy === undefined) {
      let result: ClaimResult;
      try {
        result = sync.claimOne(this.keyOf(key), this.owner, this.options.leaseMs);
      } catch (err) {
        this.local.delete(key); // not held: a later copy is not left waiting for a claim that never was
        throw err;
      }
      return this.answer(key, later, result);
    }
    this.calls.claim(claiming(key, later));
    return undefined;
  }

  /** The flow acked the delivery of a key: records it as processed; resolves once the store has it (then the ack may go). */
  complete(key: string): Promise<void> {
    return this.completeNow(key) ? Promise.resolve() : new Promise((resolve) => this.calls.complete(key, resolve));
  }

  /**
   * {@link complete} without a promise: `recorded` is called once the store has the key (at once with
   * a store that answers at once; later from inside the gate: it must not throw).
   */
  completeThen(key: string, recorded: () => void): void {
    if (this.completeNow(key)) recorded();
    else this.calls.complete(key, recorded);
  }

  /** {@link complete} when the store answers at once (memory): recorded now, and true; false: call {@link complete}. */
  completeNow(key: string): boolean {
    if (!this.sync || this.downWhy !== undefined) return false;
    this.sync.completeOne(this.keyOf(key), this.options.retentionMs);
    this.local.finish(key, 'duplicate');
    return true;
  }

  /**
   * The delivery of a key was retried or parked (or its settle timeout ended it): the next delivery
   * may process it, and a copy waiting here is looked at at once.
   */
  release(key: string): void {
    const local = this.local.get(key);
    const next = local && this.local.handOver(local);
    if (next) {
      // A copy waits here: it takes over the claim (still this consumer's); its lease starts anew when granted.
      this.calls.claim(claiming(key, next));
      return;
    }
    this.local.delete(key);
    if (this.sync && this.downWhy === undefined) this.sync.releaseOne(this.keyOf(key), this.owner);
    else this.calls.release(key);
  }

  /**
   * The consumer stops: nothing more is admitted, and what waits is let go of (resolved `unchecked`
   * with `stopped` set: the caller does not process it; it goes back to the queue with its channel).
   * Completes and releases still go out until {@link close}.
   */
  endAdmissions(): void {
    this.closed = true;
    this.rechecks.clear();
    const waiting = [...this.calls.takeClaims(), ...this.held];
    this.held.clear();
    for (const claim of waiting) this.local.delete(claim.key);
    this.local.letGo();
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
    if (this.downWhy === undefined && this.calls.writing) await this.calls.flush();
    this.probe.stop();
    this.calls.dropWrites();
  }

  private claimed(claim: Claiming, result: ClaimResult | undefined): void {
    const admission = this.answer(claim.key, claim.resolve, result, claim);
    if (admission !== undefined) claim.resolve(admission);
  }

  /**
   * What a claim's answer means: the admission, or undefined while it waits (held by another consumer,
   * or asked again). `claim`: the one that was sent (a store that answers at once sends none).
   */
  private answer(key: string, resolve: Waiter, result: ClaimResult | undefined, claim?: Claiming): Admission | undefined {
    if (this.closed) return 'unchecked';
    switch (result?.state) {
      case 'claimed': {
        // The lease runs from now: copies waiting here claim anew only if it ends unsettled.
        this.local.granted(key, this.timer.now() + this.options.leaseMs);
        return 'claimed';
      }
      case 'done':
        this.local.finish(key, 'duplicate');
        return 'duplicate';
      case 'held': {
        // Another consumer processes it: look again soon, and at the latest when its lease ends.
        const held = claim ?? claiming(key, resolve);
        held.nextCheck = Math.min(result.until, this.timer.now() + this.recheckMs);
        this.held.add(held);
        this.rechecks.set(held, held.nextCheck);
        return undefined;
      }
      default:
        this.failed(new Error(`the store gave no answer for key '${key}'`));
        this.calls.claim(claim ?? claiming(key, resolve));
        return undefined;
    }
  }

  private keyOf(key: string): DedupeKey {
    return { scope: this.options.scope, key };
  }

  /** The schedule's due items: held keys are asked again; a local key whose lease ended unsettled goes to a waiting copy. */
  private recheck(items: Array<Claiming | LocalKey>): void {
    if (this.closed) return;
    const now = this.timer.now();
    for (const item of items) {
      if ('nextCheck' in item) {
        if (this.held.delete(item)) this.calls.claim(item);
        continue;
      }
      // Its lease ended and it was never settled here (a flow that dropped the msg): a waiting copy claims
      // anew (the store renews this consumer's claim).
      const next = this.local.due(item, now);
      if (next) this.calls.claim(claiming(item.key, next));
    }
  }

  private failed(err: unknown): void {
    // A store's own error that starts with its name says what is wrong in its words; anything else is named here.
    const { description } = this.options.store;
    const text = err instanceof Error ? err.message : String(err);
    const why = err instanceof DedupeStoreError && text.startsWith(description) ? `deduplication store ${text}` : `deduplication store ${description} failed: ${text}`;
    if (this.downWhy !== undefined) return;
    this.downWhy = why;
    this.downKind = err instanceof DedupeStoreError ? err.problem : 'other';
    this.emit('down', why);
    if (this.options.storeDown === 'process') {
      // Processing goes on without deduplication: what waits for a claim is admitted unchecked.
      this.emit('warning', `${why}: processing WITHOUT deduplication until it answers again (duplicates are possible meanwhile)`);
      for (const claim of this.calls.takeClaims()) {
        // The copies waiting behind it go unchecked too (nothing would look at them again).
        this.local.finish(claim.key, 'unchecked');
        claim.resolve('unchecked');
      }
      this.calls.dropWrites();
    }
    this.probe.start();
  }

  /** The store answered the probe. */
  private storeUp(): void {
    if (this.shut) return;
    this.downWhy = undefined;
    this.downKind = undefined;
    this.emit('up');
    this.calls.schedule();
  }
}
