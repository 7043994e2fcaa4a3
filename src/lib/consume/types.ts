/** The consumer session's options, states, counters and events, as plain types. */
import type { BrokerConnection } from '../connection/broker-connection';
import type { InvalidBodyPolicy } from '../settle/decide';
import type { DeliveryRegistry } from './registry';
import type { QueueCounters } from '../observe/metrics';
import type { DeliveredMessage } from '../message/message-info';
import type { DecodeMode } from '../message/payload';
import type { SettleOutcome, TrackedDelivery } from '../settle/settlement';
import type { DefinitionReader, ObjectCheck } from '../topology/apply';
import type { RetryTopologyConfig } from '../topology/plan';

export interface SessionStats {
  inFlight: number;
  /** Deliveries received since the consumer started. */
  delivered: number;
  acked: number;
  retried: number;
  parked: number;
  /** Messages waiting in the parking queue (from all consumers and the broker), when watched. */
  parkingDepth?: number;
}

/** One settled delivery, for metrics and the events output. */
export interface Settled {
  outcome: SettleOutcome;
  /** The flow's reason (its error text), or the park reason. */
  reason: string;
  messageId: string | null;
  /** From receipt to settle. */
  durationMs: number;
}

export type SessionPhase = 'waiting-for-connection' | 'checking-topology' | 'consuming' | 'paused' | 'blocked' | 'topology-error' | 'channel-lost' | 'stopped';

export interface SessionState {
  phase: SessionPhase;
  detail?: string;
  /** `topology-error` of a check: what it found per object (detail has every sentence). */
  objects?: readonly ObjectCheck[];
}

export interface ConsumerSessionOptions {
  connection: BrokerConnection;
  topology: RetryTopologyConfig;
  /**
   * This consumer's deliveries waiting to be settled, one registry per session; its prefix names the
   * node that owns the session. Default: a registry of its own with prefix `consumer`.
   */
  registry?: DeliveryRegistry<TrackedDelivery>;
  prefetch: number;
  /** A delivery nobody settles within this time is retried; 0 disables the timer. */
  settleTimeoutMs: number;
  decode: DecodeMode;
  /** What happens to a body that does not decode (JSON that does not parse). */
  invalidBody: InvalidBodyPolicy;
  definitionReader?: DefinitionReader;
  /** Pause before a delivery whose parking failed goes back to the queue. */
  parkFailurePauseMs?: number;
  /**
   * Strict ordered processing: prefetch 1, and a retry keeps the message at the head of the queue and
   * runs it again after `pauseMs`, until it succeeds or is parked.
   */
  ordered?: { pauseMs: number };
  /** How often to look at the queues' depths (passive checks); 0: never. */
  parkingWatchMs?: number;
  /** Where settles are counted (Prometheus metrics): a few increments per settle. */
  metrics?: QueueCounters;
}

export interface StopOptions {
  /** How long the messages the flow holds may take to be settled before the channel closes; 0: close at once. */
  drainMs?: number;
  /** Whether the flow can still settle them (false: its nodes are stopping too, no drain). Asked once the deploy stopped its nodes. */
  settlePath?: () => boolean;
}

export interface ConsumerSessionEvents {
  state: [SessionState];
  /** The counters changed: read `stats` (not computed per event: it fires on every delivery). */
  stats: [];
  /** A delivery was settled; only built when someone listens (the hot path stays cheap). */
  settled: [Settled];
  message: [DeliveredMessage];
  /** A body that did not decode, with `invalidBody: 'error'`: the delivery waits to be settled. */
  invalid: [DeliveredMessage, string];
  warning: [string];
  error: [string];
}
