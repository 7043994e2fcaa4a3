/**
 * What the retry consumers of this process did, as counters and gauges, and its Prometheus text.
 * Names follow the OpenTelemetry messaging semantic conventions where they exist
 * (`messaging.client.consumed.messages`, `messaging.process.duration`), written the way
 * OpenTelemetry's Prometheus exporter writes them (dots as `_`, unit suffix, `_total`); the rest are
 * the package's own, under `rabbitmq_retry_`. Counting costs a few number increments per settle.
 */
import { RetryHistory, type HistoryOwner } from './retry-history';
import type { Clock } from './history';

export type SettledOutcome = 'acked' | 'retried' | 'parked' | 'duplicate';
export type Outcome = SettledOutcome | 'replayed';
/** The `kind` label: what the error rules made of a failure (see lib/classify), `none` when they were not asked. */
export type KindLabel = 'transient' | 'permanent' | 'done' | 'none';

/**
 * The kinds each outcome can have, rendered even at 0 (a series that exists from the start): an ack
 * is plain or `done`; a retry is transient; a park is from a park node or an invalid body (none),
 * out of attempts (transient) or permanent. Other combinations show once counted.
 */
const KINDS_OF: Readonly<Record<Outcome, readonly KindLabel[]>> = {
  acked: ['none', 'done'],
  retried: ['none', 'transient'],
  parked: ['none', 'transient', 'permanent'],
  duplicate: ['none'],
  replayed: ['none'],
};

function noKinds(): Record<KindLabel, number> {
  return { none: 0, transient: 0, permanent: 0, done: 0 };
}

/** One settle outcome as the events output sends it: plain data. */
export interface OutcomeEvent {
  event: Outcome;
  attempt: number;
  /** The flow's error (retried), the park reason (parked), null when there is none. */
  reason: string | null;
  /** The consumer's main queue. */
  queue: string;
  messageId: string | null;
  /** From delivery to settle; null for a replay (no delivery of this consumer). */
  durationMs: number | null;
  /** A settle's error kind (see lib/classify): set by a retry-settle in retry mode and the settle timeout, else null; a replay has none. */
  kind?: Exclude<KindLabel, 'none'> | null;
}

/** Depths at the last look; null for a queue that could not be checked (missing). */
export interface QueueDepths {
  main: number | null;
  /** Per retry queue (one per backoff tier). */
  retry: Record<string, number | null>;
  parking: number | null;
}

/** A live consumer, read for the gauges at each scrape. */
export interface ConsumerGauges {
  queue: string;
  parkingQueue: string;
  inFlight(): number;
  depths(): QueueDepths | undefined;
  /** With the kill switch on: the consumer (node id) and its circuit's state now. */
  consumer?: string;
  circuit?(): 'closed' | 'open' | 'probing' | undefined;
}

const CIRCUIT_STATES = ['closed', 'open', 'probing'] as const;

/** A broker connection's publish buffer, read for the gauges at each scrape. */
export interface BrokerGauges {
  /** The config node's id: two configs may name the same host. */
  id: string;
  broker: string;
  buffer(): { messages: number; bytes: number; blocked: boolean };
}

/** An outbox relay, read for the gauges at each scrape (its row counts as of its last look). */
export interface OutboxGauges {
  id: string;
  table: string;
  stats(): { sent: number; retried: number; failed: number };
  rows(): { pending: number; failed: number } | undefined;
}

/** OpenTelemetry's advised bucket boundaries for `messaging.process.duration` (s). */
export const DURATION_BUCKETS_S: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

export class Histogram {
  /** Per bucket, not cumulative: rendering adds them up. */
  readonly counts: number[] = DURATION_BUCKETS_S.map(() => 0);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    this.sum += seconds;
    this.count += 1;
    const index = DURATION_BUCKETS_S.findIndex((le) => seconds <= le);
    if (index >= 0) this.counts[index] = (this.counts[index] ?? 0) + 1;
  }
}

/** One main queue's counters, kept for the life of the process (Prometheus counters never go back). */
export class QueueCounters {
  /** By outcome and kind (the counter's `kind` label). */
  readonly kinds: Record<Outcome, Record<KindLabel, number>> = { acked: noKinds(), retried: noKinds(), parked: noKinds(), duplicate: noKinds(), replayed: noKinds() };
  readonly durations: Record<SettledOutcome, Histogram> = { acked: new Histogram(), retried: new Histogram(), parked: new Histogram(), duplicate: new Histogram() };

  /** By outcome, all kinds together: read from `kinds`, not counted twice on the settle path. */
  get consumed(): Record<Outcome, number> {
    const total = (outcome: Outcome): number => Object.values(this.kinds[outcome]).reduce((a, b) => a + b, 0);
    return { acked: total('acked'), retried: total('retried'), parked: total('parked'), duplicate: total('duplicate'), replayed: total('replayed') };
  }

  record(outcome: SettledOutcome, durationMs: number, kind: KindLabel = 'none'): void {
    this.kinds[outcome][kind] += 1;
    this.durations[outcome].observe(durationMs / 1000);
  }
}

/** Where a consumer's settles are counted (a QueueCounters, or a consumer's recorder). */
export type OutcomeRecorder = Pick<QueueCounters, 'record'>;

/** A consumer's recorder: its settles go to its main queue's counters and to its own history. */
export interface ConsumerRecorder extends OutcomeRecorder {
  /** The same history, with the Prometheus counters of another queue (a partition queue of the consumer). */
  forQueue(queue: string): OutcomeRecorder;
  /** Its parking queue's depth now (undefined: not known), for the history. */
  depth(value: number | undefined): void;
  /** The consumer stopped (its history stays for the rest of the day). */
  close(): void;
}

function label(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function labels(pairs: Record<string, string>): string {
  return `{${Object.entries(pairs)
    .map(([name, value]) => `${name}="${label(value)}"`)
    .join(',')}}`;
}

function header(lines: string[], name: string, type: string, help: string): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
}

/**
 * Counts and renders; it carries no events between nodes (those travel through the objects that own
 * them). Node-RED keeps one per process, for its one scrape endpoint. It also keeps the consumers'
 * minute-by-minute history of the last 24 hours (`history`), fed by the same counts.
 */
export class RetryMetrics {
  readonly history: RetryHistory;
  private readonly queues = new Map<string, QueueCounters>();
  private readonly consumers = new Set<ConsumerGauges>();
  private readonly brokers = new Set<BrokerGauges>();
  private readonly outboxes = new Set<OutboxGauges>();

  constructor(clock: Clock = Date.now) {
    this.history = new RetryHistory(clock);
  }

  /** The counters of a main queue, created on first use. */
  counters(queue: string): QueueCounters {
    let counters = this.queues.get(queue);
    if (!counters) {
      counters = new QueueCounters();
      this.queues.set(queue, counters);
    }
    return counters;
  }

  /** Where a consumer's settles are counted: its main queue's counters and its own history. */
  consumer(owner: HistoryOwner): ConsumerRecorder {
    const ring = this.history.open(owner);
    // The counters of a queue are made at its first settle: a partitioned consumer's own name has none.
    const recordIn = (queue: string): OutcomeRecorder['record'] => {
      let counters: QueueCounters | undefined;
      return (outcome, durationMs, kind) => {
        counters ??= this.counters(queue);
        counters.record(outcome, durationMs, kind);
        ring.add(outcome === 'duplicate' ? 'duplicates' : outcome);
      };
    };
    return {
      record: recordIn(owner.queue),
      forQueue: (queue) => ({ record: recordIn(queue) }),
      depth: (value) => ring.depth(value),
      close: () => this.history.close(owner.consumer),
    };
  }

  /** Counts a parked message a park-replay sent back to its main queue (and, given its configuration, in the history). */
  replayed(queue: string, config?: string): void {
    const counters = this.counters(queue);
    counters.kinds.replayed.none += 1;
    if (config !== undefined) this.history.replayed(config, queue);
  }

  addConsumer(gauges: ConsumerGauges): () => void {
    this.consumers.add(gauges);
    this.counters(gauges.queue);
    return () => this.consumers.delete(gauges);
  }

  addBroker(gauges: BrokerGauges): () => void {
    this.brokers.add(gauges);
    return () => this.brokers.delete(gauges);
  }

  addOutbox(gauges: OutboxGauges): () => void {
    this.outboxes.add(gauges);
    return () => this.outboxes.delete(gauges);
  }

  /** The Prometheus text exposition format (version 0.0.4). */
  render(): string {
    const lines: string[] = [];
    const consumed = 'messaging_client_consumed_messages_total';
    header(lines, consumed, 'counter', 'Messages retry consumers settled (acked, retried, parked), acked as duplicates without processing, or park-replay sent back, by main queue, outcome and error kind (none: no error rules asked).');
    for (const [queue, counters] of this.queues) {
      for (const [outcome, byKind] of Object.entries(counters.kinds) as Array<[Outcome, Record<KindLabel, number>]>) {
        for (const [kind, n] of Object.entries(byKind)) {
          if (n > 0 || KINDS_OF[outcome].includes(kind as KindLabel)) lines.push(`${consumed}${labels({ messaging_system: 'rabbitmq', queue, outcome, kind })} ${n}`);
        }
      }
    }
    const duration = 'messaging_process_duration_seconds';
    header(lines, duration, 'histogram', 'Time from delivery to settle, by main queue and outcome.');
    for (const [queue, counters] of this.queues) {
      for (const [outcome, histogram] of Object.entries(counters.durations)) {
        const base = { messaging_system: 'rabbitmq', queue, outcome };
        let cumulative = 0;
        DURATION_BUCKETS_S.forEach((le, i) => {
          cumulative += histogram.counts[i] ?? 0;
          lines.push(`${duration}_bucket${labels({ ...base, le: String(le) })} ${cumulative}`);
        });
        lines.push(`${duration}_bucket${labels({ ...base, le: '+Inf' })} ${histogram.count}`);
        lines.push(`${duration}_sum${labels(base)} ${histogram.sum}`, `${duration}_count${labels(base)} ${histogram.count}`);
      }
    }
    this.renderGauges(lines);
    return `${lines.join('\n')}\n`;
  }

  private renderGauges(lines: string[]): void {
    const inFlight = new Map<string, number>();
    const depths = new Map<string, { role: string; consumerQueue: string; depth: number }>();
    const parking = new Map<string, { parkingQueue: string; depth: number }>();
    for (const consumer of this.consumers) {
      inFlight.set(consumer.queue, (inFlight.get(consumer.queue) ?? 0) + consumer.inFlight());
      const seen = consumer.depths();
      if (!seen) continue;
      const add = (name: string, role: string, depth: number | null): void => {
        if (depth !== null) depths.set(name, { role, consumerQueue: consumer.queue, depth });
      };
      add(consumer.queue, 'main', seen.main);
      for (const [name, depth] of Object.entries(seen.retry)) add(name, 'retry', depth);
      add(consumer.parkingQueue, 'parking', seen.parking);
      if (seen.parking !== null) parking.set(consumer.queue, { parkingQueue: consumer.parkingQueue, depth: seen.parking });
    }
    header(lines, 'rabbitmq_retry_in_flight_messages', 'gauge', 'Deliveries waiting to be settled, by main queue.');
    for (const [queue, n] of inFlight) lines.push(`rabbitmq_retry_in_flight_messages${labels({ queue })} ${n}`);
    header(lines, 'rabbitmq_retry_parking_messages', 'gauge', 'Messages waiting in the parking queue at the last look, by main queue.');
    for (const [queue, p] of parking) lines.push(`rabbitmq_retry_parking_messages${labels({ queue, parking_queue: p.parkingQueue })} ${p.depth}`);
    header(lines, 'rabbitmq_retry_queue_messages', 'gauge', 'Ready messages in the main, retry and parking queues at the last look.');
    for (const [name, d] of depths) lines.push(`rabbitmq_retry_queue_messages${labels({ queue: name, role: d.role, main_queue: d.consumerQueue })} ${d.depth}`);
    header(lines, 'rabbitmq_retry_circuit_state', 'gauge', "A consumer's kill switch: 1 for its state now (closed, open, probing), 0 for the others.");
    for (const consumer of this.consumers) {
      const state = consumer.circuit?.();
      if (state === undefined) continue;
      for (const s of CIRCUIT_STATES) lines.push(`rabbitmq_retry_circuit_state${labels({ queue: consumer.queue, consumer: consumer.consumer ?? '', state: s })} ${s === state ? 1 : 0}`);
    }
    header(lines, 'rabbitmq_retry_publish_buffer_messages', 'gauge', 'Publishes waiting in the publish buffer of a broker connection.');
    const buffers = [...this.brokers].map((b) => ({ id: b.id, broker: b.broker, state: b.buffer() }));
    for (const { id, broker, state } of buffers) lines.push(`rabbitmq_retry_publish_buffer_messages${labels({ broker, id })} ${state.messages}`);
    header(lines, 'rabbitmq_retry_broker_blocked', 'gauge', '1 while the broker blocks publishing on the connection (memory or disk alarm).');
    for (const { id, broker, state } of buffers) lines.push(`rabbitmq_retry_broker_blocked${labels({ broker, id })} ${state.blocked ? 1 : 0}`);
    const outboxes = [...this.outboxes];
    header(lines, 'rabbitmq_retry_outbox_events_total', 'counter', 'Outbox events a relay published (sent), will try again (retried) or gave up on (failed), since it started.');
    for (const o of outboxes) for (const [outcome, n] of Object.entries(o.stats())) lines.push(`rabbitmq_retry_outbox_events_total${labels({ table: o.table, id: o.id, outcome })} ${n}`);
    header(lines, 'rabbitmq_retry_outbox_rows', 'gauge', 'Outbox rows waiting to be published (pending) or given up on (failed) at the last look.');
    for (const o of outboxes) {
      const rows = o.rows();
      if (rows) for (const [status, n] of Object.entries(rows)) lines.push(`rabbitmq_retry_outbox_rows${labels({ table: o.table, id: o.id, status })} ${n}`);
    }
  }
}
