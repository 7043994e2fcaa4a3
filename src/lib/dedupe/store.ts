/**
 * What an idempotent consumer needs of a store of processed messages: claim a key on arrival (with a
 * lease, so a duplicate that arrives while the first copy is still in a flow is held, not processed
 * twice), complete it when the flow acked (recorded before the ack goes to the broker), release it on
 * a retry or a park (so the next delivery is processed again). Every call takes a batch: the consumer
 * collects one event-loop turn's keys and makes one round trip, the way acks are batched.
 *
 * Keys are scoped (by default the consumer's main queue), so the same business key on two queues is
 * two records. Stores: memory (one process), Redis and PostgreSQL (shared by several Node-RED
 * instances).
 */

/** A record's identity: `scope` (the consumer's main queue by default) and the message's key. */
export interface DedupeKey {
  scope: string;
  key: string;
}

export type ClaimResult =
  /** Claimed for the caller (no record, an ended lease, or the caller's own live claim, renewed). */
  | { state: 'claimed' }
  /** Processed before, within the retention: a duplicate. */
  | { state: 'done' }
  /** Another owner's live claim: look again when it settles or at `until` (ms since epoch). */
  | { state: 'held'; owner: string; until: number };

/** The two answers without details, shared by every store (frozen: one object each, not one per key). */
export const CLAIMED: ClaimResult = Object.freeze({ state: 'claimed' });
export const DONE: ClaimResult = Object.freeze({ state: 'done' });

export interface DedupeStore {
  /** Names the store for statuses and logs, without secrets: `memory`, `redis 10.0.0.5:6379`, `postgres app@db/orders_dedupe`. */
  readonly description: string;
  /** The longest key (scope and key together, UTF-8 bytes) the store takes. */
  readonly maxKeyBytes: number;
  /**
   * Creates what the store needs (`declare`: a table) or checks it is there as expected (`check`),
   * and checks the store answers. Rejects with a {@link DedupeStoreError} naming the problem.
   */
  prepare(): Promise<void>;
  /**
   * Resolves when the store answers (used to see a store come back, and by the health report); rejects
   * otherwise. A store whose table was found wrong checks it again here: it is not up until it can be used.
   */
  ping(): Promise<void>;
  /**
   * Claims each key for `owner` until `leaseMs` from now; one result per key, in order. A done key
   * stays done; another owner's live claim is `held`.
   */
  claim(keys: readonly DedupeKey[], owner: string, leaseMs: number): Promise<ClaimResult[]>;
  /** Marks the keys processed for `retentionMs`, whoever claimed them (the flow acked). */
  complete(keys: readonly DedupeKey[], retentionMs: number): Promise<void>;
  /** Removes the owner's claims on the keys; a done key or another owner's claim stays. */
  release(keys: readonly DedupeKey[], owner: string): Promise<void>;
  /** Closes what the store holds open (connections, timers). */
  close(): Promise<void>;
  /**
   * The writes of one turn and the claims of the next in one round trip (a store that has it; the
   * gate makes separate calls otherwise): completes first, then releases, then claims, as if they were
   * three calls in that order. No key is in two of the lists (the gate sees to it).
   */
  exchange?(calls: StoreExchange): Promise<ClaimResult[]>;
  /** Calls answered at once, without a round trip (the memory store): the gate answers a delivery in the same turn. */
  readonly sync?: SyncDedupeStore;
  /** Calls in flight at once, when the store wants fewer or more than the gate's default (`MAX_IN_FLIGHT`). */
  readonly maxInFlight?: number;
}

/** One round trip's worth of store calls: keys to complete, to release and to claim. */
export interface StoreExchange {
  complete: readonly DedupeKey[];
  retentionMs: number;
  release: readonly DedupeKey[];
  claim: readonly DedupeKey[];
  owner: string;
  leaseMs: number;
}

/** A store's calls for one key, answered at once (same semantics as the batch calls). */
export interface SyncDedupeStore {
  claimOne(key: DedupeKey, owner: string, leaseMs: number): ClaimResult;
  completeOne(key: DedupeKey, retentionMs: number): void;
  releaseOne(key: DedupeKey, owner: string): void;
}

export type DedupeStoreProblem = 'unreachable' | 'auth' | 'schema' | 'other';

/** A store that cannot be used, with what is wrong in words a user can act on (never a password). */
export class DedupeStoreError extends Error {
  constructor(
    message: string,
    readonly problem: DedupeStoreProblem,
  ) {
    super(message);
    this.name = 'DedupeStoreError';
  }
}
