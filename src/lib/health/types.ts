/**
 * What the health report is made of: plain states per part (brokers, consumers, deduplication stores,
 * databases, outbox relays) as their owners know them, and the report built from them.
 */
import type { ConnectionPhase } from '../connection';
import type { SessionPhase } from '../consume';
import type { DedupeStoreProblem } from '../dedupe';
import type { CircuitState } from '../degrade';

/**
 * How one part is doing. Ready (200) unless some part is `waiting` or `down`:
 * - `up`: works;
 * - `degraded`: works, but holds something back on purpose or has given up on some of it (the kill
 *   switch open or probing, an ordered consumer retrying its head message, outbox events failed);
 * - `paused`: paused by a user (a `pause` control msg);
 * - `unused`: nothing uses it (its connection is not even opened);
 * - `waiting`: not working yet: connecting, checking its topology, or waiting for another part;
 * - `down`: failed: a broker that cannot be reached, a topology that does not match, a store or
 *   database that does not answer, a configuration that cannot work.
 */
export type PartStatus = 'up' | 'degraded' | 'paused' | 'unused' | 'waiting' | 'down';

export interface BrokerInput {
  id: string;
  name: string;
  /** Where it connects, without passwords. */
  url: string;
  phase: ConnectionPhase;
  /** When it last became connected or stopped being connected (ms since epoch). */
  since: number;
  /** The last connection error, or why the configuration cannot work. */
  error?: string;
  /** While waiting: when it tries again (ms since epoch). */
  nextAttemptAt?: number;
  /** While connected: the broker's host:port. */
  address?: string;
  /** Whether any node uses it (the connection is open only then). */
  used: boolean;
}

export interface ConsumerInput {
  id: string;
  name: string;
  queue: string;
  /** `not-started`: its configuration cannot work (detail says why). */
  phase: SessionPhase | 'not-started';
  detail?: string;
  /** `store-down`: what is wrong with the deduplication store (`schema`: its table). */
  storeProblem?: DedupeStoreProblem;
  /** The kill switch, when on. */
  circuit?: CircuitState;
}

export interface StoreInput {
  id: string;
  name: string;
  /** The store, named without secrets. */
  store: string;
  used: boolean;
  /** Why it does not answer (or cannot be used); undefined while it answers. */
  problem?: string;
}

export interface DatabaseInput {
  id: string;
  name: string;
  database: string;
  used: boolean;
  /** `invalid`: the configuration cannot work (problem says why). */
  phase: 'connecting' | 'up' | 'down' | 'closed' | 'invalid';
  problem?: string;
}

export interface RelayInput {
  id: string;
  name: string;
  table: string;
  /** Why it cannot relay (its configuration, its table); undefined while it can. */
  problem?: string;
  /** Whether the broker it publishes to is connected. */
  brokerConnected: boolean;
  /** The last look at its table: when, and what it found or why it failed. Undefined before the first. */
  look?: { at: number; pending: number; failed: number; oldestPendingMs: number | null } | { at: number; error: string };
}

export interface HealthInput {
  brokers: BrokerInput[];
  consumers: ConsumerInput[];
  stores: StoreInput[];
  databases: DatabaseInput[];
  relays: RelayInput[];
}

interface PartReport {
  id: string;
  name: string;
  status: PartStatus;
  /** Why it is not up, in words. */
  reason?: string;
}

export interface BrokerReport extends PartReport {
  url: string;
  connected: boolean;
  /** When it became connected, or stopped being connected (ISO 8601). */
  since: string;
  address?: string;
  /** While waiting: when it tries again (ISO 8601). */
  nextAttempt?: string;
}

export interface ConsumerReport extends PartReport {
  queue: string;
  /** The consumer's own state: consuming, paused, circuit-open, store-down, topology-error, … */
  state: ConsumerInput['phase'];
  circuit?: CircuitState;
}

export interface StoreReport extends PartReport {
  store: string;
}

export interface DatabaseReport extends PartReport {
  database: string;
}

export interface RelayReport extends PartReport {
  table: string;
  pending: number | null;
  failed: number | null;
  /** The age of the oldest pending event now, in seconds (null: none pending, or not looked at yet). */
  oldestPendingSeconds: number | null;
}

export interface HealthReport {
  /** Everything that must be up is up: a probe answers 200, else 503. */
  ready: boolean;
  /** `ready`, `degraded` (ready, with warnings) or `not ready`. */
  status: 'ready' | 'degraded' | 'not ready';
  /** When the report was made (ISO 8601). */
  at: string;
  /** One sentence per part that keeps it from being ready. */
  problems: string[];
  /** One sentence per degraded part. */
  warnings: string[];
  brokers: BrokerReport[];
  consumers: ConsumerReport[];
  stores: StoreReport[];
  databases: DatabaseReport[];
  relays: RelayReport[];
}
