/** The consumer session's options, states, counters and events, as plain types. */
import type { Channel } from 'amqplib';
import type { ErrorKind } from '../classify';
import type { CircuitChange, CircuitSettings } from '../degrade';
import type { DedupeKeyResult, DedupeStore, DedupeStoreProblem, StoreDownPolicy } from '../dedupe';
import type { DecodeMode, DeliveredMessage } from '../message';
import type { OutcomeRecorder } from '../observe';
import type { CopyPublisher, DecisionPolicy, InvalidBodyPolicy, OrderedHold, SettleOutcome, Settler } from '../settle';
import type { BrokerCancel } from './broker-cancel';
import type { DeliveryDedupe } from './admission';
import type { DepthWatch } from './depths';
import type { MessageTracer } from '../trace';
import type { ChannelRunner, DefinitionReader, ObjectCheck, RetryTopologyConfig } from '../topology';

export interface SessionStats {
  inFlight: number;
  /** Deliveries received since the consumer started. */
  delivered: number;
  acked: number;
  retried: number;
  parked: number;
  /** Duplicates of processed keys, acked without entering the flow. */
  duplicates: number;
  /** Deliveries waiting for their deduplication key (held by another copy or consumer, or the store). */
  waiting: number;
  /** Messages waiting in the parking queue (from all consumers and the broker), when watched. */
  parkingDepth?: number;
  /** Check mode without the management API: the queues' arguments were not compared with the configuration. */
  argumentsUnchecked?: boolean;
  /** Deliveries the rate limit holds back now (when there are any). */
  rateLimited?: number;
}

/** One settled delivery, for metrics and the events output. */
export interface Settled {
  outcome: SettleOutcome;
  /** The flow's reason (its error text), or the park reason. */
  reason: string;
  messageId: string | null;
  /** From receipt to settle. */
  durationMs: number;
  /**
   * What the retry configuration's error rules made of the failure: set for every settle of a
   * retry-settle in retry mode (and the settle timeout: transient); undefined for a plain ack, a park
   * node, an invalid body.
   */
  kind?: ErrorKind;
}

export type SessionPhase =
  | 'waiting-for-connection'
  | 'checking-topology'
  | 'consuming'
  | 'paused'
  /** The kill switch tripped: the consumer takes no messages until it probes (or a `resume`). */
  | 'circuit-open'
  /** The deduplication store is down: the consumer takes no messages until it answers (detail says why). */
  | 'store-down'
  | 'blocked'
  | 'topology-error'
  | 'channel-lost'
  | 'stopped';

export interface SessionState {
  phase: SessionPhase;
  detail?: string;
  /** `topology-error` of a check: what it found per object (detail has every sentence). */
  objects?: readonly ObjectCheck[];
  /** `channel-lost` because the broker cancelled the consumer (basic.cancel): why, as far as the package can tell; it sets up again. */
  cancelled?: BrokerCancel;
  /** `store-down`: what is wrong with the store (`schema`: its table is missing or not as expected, the database answers). */
  storeProblem?: DedupeStoreProblem;
}

/**
 * What a consumer needs of its broker connection (BrokerConnection has it): to know when it is up or
 * down, channels, and a last chance to write what is pending when it closes.
 */
export interface SessionConnection {
  /** The live connection, undefined while there is none. */
  readonly connection: unknown;
  on(event: 'connected' | 'disconnected' | 'closing', listener: () => void): unknown;
  off(event: 'connected' | 'disconnected' | 'closing', listener: () => void): unknown;
  createChannel(): Promise<Channel>;
  /** Runs work on a channel of its own, closed afterwards (a 404 or 406 closes the channel it happens on). */
  withThrowawayChannel: ChannelRunner;
}

export interface ConsumerSessionOptions {
  connection: SessionConnection;
  /** Names the retry configuration the session belongs to, on each msg (`msg.amqp.config`). */
  configId?: string;
  /** Where a park or a retry-tier copy is published (confirmed, mandatory). */
  copies: CopyPublisher;
  topology: RetryTopologyConfig;
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
  /** Where depths are looked at, shared by every consumer of the connection (default: a watch of its own). */
  queueWatch?: DepthWatch;
  /** Where settles are counted (Prometheus metrics): a few increments per settle. */
  metrics?: OutcomeRecorder;
  /** The idempotent consumer: deliveries pass a store of processed keys. */
  dedupe?: SessionDedupe;
  /** The kill switch: stop consuming while the downstream fails (off without it). */
  circuit?: CircuitSettings;
  /** At most this many deliveries a second to the flow; 0 or none: no limit. */
  rateLimit?: number;
  /** Spans of each delivery's processing and settle (OpenTelemetry, when a process records them); none without. */
  tracer?: MessageTracer;
}

export interface SessionDedupe {
  store: DedupeStore;
  /** The key of a delivery, as the flow would see it (default: its messageId); an expression may take a turn or more. */
  keyOf: (delivered: DeliveredMessage) => DedupeKeyResult | Promise<DedupeKeyResult>;
  /** Batch mode: a batch's claims go to the store as one call (see DedupeGateOptions.claimWindow). */
  claimWindow?: { size: number; waitMs: number };
  /** A delivery without a key: processed without deduplication, or parked. */
  noKey: 'process' | 'park';
  /** A store that fails: stop consuming until it answers (pause), or process without deduplication. */
  storeDown: StoreDownPolicy;
  /** How long a claim lives (at least the settle timeout plus 30 s is used). */
  leaseMs: number;
  /** How long a processed key is remembered. */
  retentionMs: number;
}

export interface StopOptions {
  /** How long the messages the flow holds may take to be settled before the channel closes; 0: close at once. */
  drainMs?: number;
  /** Whether the flow can still settle them (false: its nodes are stopping too, no drain). Asked once the deploy stopped its nodes. */
  settlePath?: () => boolean;
}

export interface ConsumerSessionEvents {
  state: [SessionState];
  /** The parking queue's depth changed (read `stats`). */
  parking: [];
  /** The kill switch changed state. */
  circuit: [CircuitChange];
  /** The rate limit starts holding deliveries back (batch mode sends its partial batch then). */
  holding: [];
  /** Good news worth a log line (a store that answers again). */
  info: [string];
  warning: [string];
  error: [string];
}

/** What a consumer's `Deliveries` works with. */
export interface DeliveriesOptions {
  /** Names the retry configuration on `msg.amqp.config`. */
  configId: string;
  mainQueue: string;
  policy: DecisionPolicy;
  settler: Settler;
  /** Ordered mode's hold (a retry keeps the message at the head and runs it again). */
  hold?: OrderedHold;
  /** A delivery nobody settles within this time is retried; 0 disables the timer. */
  settleTimeoutMs: number;
  decode: DecodeMode;
  invalidBody: InvalidBodyPolicy;
  /** Pause before a delivery whose copy (park, retry tier) failed goes back to the queue. */
  requeuePauseMs: number;
  /** Where settles are counted (Prometheus metrics). */
  metrics?: OutcomeRecorder;
  /** Deduplication: each delivery with a key passes the gate before the flow sees it. */
  dedupe?: DeliveryDedupe;
  /** Spans of each delivery (OpenTelemetry, when the process records them): none without. */
  tracer?: MessageTracer;
}


export interface DeliveryEvents {
  /** A delivery for the flow. */
  message: [DeliveredMessage];
  /** A body that did not decode, with `invalidBody: 'error'`: the delivery waits to be settled. */
  invalid: [DeliveredMessage, string];
  /** The counters or what is in flight changed: read `counters` / `inFlight` (not computed per event). */
  changed: [];
  /** A delivery was settled; built only when someone listens (the hot path stays cheap). */
  settled: [Settled];
  warning: [string];
  error: [string];
}
