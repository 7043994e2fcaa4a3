/** What a deduplication gate is given and what it says: its options, its answers, its events. */
import type { ProbeBackoff } from './probe';
import type { Timer } from './recheck';
import type { DedupeStore } from './store';

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
  probe?: ProbeBackoff;
  /**
   * A consumer in batch mode: its claims gathered into one store call per batch — `size` of them, or
   * those that came within `waitMs` of the first (a store that answers at once claims each at once).
   */
  claimWindow?: { size: number; waitMs: number };
  /** The clock and timer waiting copies are looked at again on (tests give their own). */
  timer?: Timer;
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
