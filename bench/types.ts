/** The bench's result types, and the state its sections share (one `Bench`, made by setup.ts). */
import type { Channel, ChannelModel, Options } from 'amqplib';
import type { Names } from '../test/helpers/flows';
import type { NameBook, RunResult } from './lib/common';
import type { Msg } from './lib/nodered';
import type { Ctx } from './lib/scenarios';
import type { RateLatency } from './lib/outbox-pipeline';
import type { ScaleResult } from './lib/scale-scenarios';
import type { HistoryMemoryRun } from './lib/history-memory';
import type { ParkingGroupRun } from './lib/parking-group';
import type { DegradeResult } from './lib/degrade-scenarios';
import type { PartitionsResult } from './lib/partitions';
import type { NativeRetryRow } from './lib/native-retry';
import type { BatchResult } from './lib/batch-result';

export interface Summary {
  msgPerSec: number;
  cpuUsPerMsg: number;
  brokerUsPerMsg: number;
  runs: Array<number | null>;
}
export interface Row {
  group: string;
  label: string;
  count: number;
  raw: Summary;
  pkg: Summary;
  ratio: number;
  /**
   * The median of each repetition's own pkg/raw ratio (its two runs taken back to back): drift on a
   * shared machine between repetitions moves it less than the ratio of the medians (`ratio`).
   */
  pairRatio: number;
  /** Raw amqplib doing the same work as the package (decode the body, build the same msg), where measured. */
  work?: Summary;
  workRatio?: number;
  /** Raw amqplib doing the same work with its acks batched the way the package batches them: the baseline of issue 19. */
  batched?: Summary;
  batchedRatio?: number;
  /**
   * Node-RED alone (lib/nodered-alone.ts): the batched raw contestant's work in the package's
   * Node-RED runtime, its msg through the package flow's hops, no package node. pkg / it: the
   * package's own share; it / batched (or / raw without a batched run): Node-RED's.
   */
  nodeRed?: Summary;
  nodeRedRatio?: number;
  nodeRedBaseRatio?: number;
}
export interface Single extends Summary {
  group: string;
  label: string;
  count: number;
}
export interface PeerRow extends Summary {
  label: string;
  version: string;
  ack: string;
  key: string;
  /** Median msg/s as a ratio to the first row (raw amqplib). */
  ratio: number;
  /** Median msg/s as a ratio to raw amqplib doing the same work with batched acks (the best hand-written client). */
  batchedRatio: number;
  /** Median CPU per delivery of the runs' warm-ups (a fresh process: the JIT compiling the hot path included). */
  warmUpCpuUsPerMsg: number;
  /** Median CPU of the main thread alone in the window (the rest of cpuUsPerMsg: V8's compiler and GC helper threads). */
  mainThreadUsPerMsg: number;
}
export interface LagStats {
  p50: number;
  p99: number;
  max: number;
}
export interface MemorySnapshot {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** V8's young generation (new space), reserved size. */
  newSpace?: number;
  /** The young generation's committed memory (part of the RSS). */
  newSpacePhysical?: number;
}
export interface MemoryRun {
  before: MemorySnapshot;
  warm: MemorySnapshot;
  end: MemorySnapshot;
  total: number;
  batchSize: number;
}
export interface Extra {
  /** Ordered throughput with a 5 ms downstream: one queue against 8 partitions. */
  partitions?: PartitionsResult;
  lag?: { count: number; rate: number; raw: LagStats; pkgAmqp: LagStats; pkgFlow: LagStats };
  memory?: MemoryRun;
  /** The same load on a raw amqplib consumer doing the same work, in a process of its own. */
  rawMemory?: MemoryRun;
  /** Node-RED alone: raw amqplib doing the same work, its msg through one Node-RED hop (source → sink), in the same runtime. */
  nodeRedMemory?: MemoryRun;
  peers?: { rows: PeerRow[]; skipped: string[] };
  /** Outbox: from the write's answer to the event at a consumer (ms). */
  outboxLatency?: { p50: number; p99: number };
  /** Outbox: from a writer's COMMIT to the event at a consumer at a sustained rate (ms), and the rate written. */
  outboxLatencyAtRate?: RateLatency;
  /** Parking groups: a park-replay node grouping the parking queue, in a Node-RED process of its own. */
  parkingGroup?: ParkingGroupRun;
  history?: HistoryMemoryRun;
  /** Batch consumption (issue 51): into PostgreSQL, client CPU per item, deduplication, one batch's memory. */
  batch?: BatchResult;
  /** Broker-native delayed retry vs the TTL retry path (RabbitMQ 4.3+), or why it did not run. */
  nativeRetry?: { count: number; rows: NativeRetryRow[] } | { skipped: string };
}
/** Everything a run measured: what the report prints and the JSON line sums up. */
export interface Results {
  /** The main table: raw against package, pair by pair. */
  rows: Row[];
  /** Single-sided measurements ("where the time goes"). */
  analysis: Single[];
  failures: string[];
  /** Lag, memory, peers and the other sections' own figures. */
  extra: Extra;
  scale: ScaleResult;
  /** Rate limit, error rules + kill switch. */
  degrade: DegradeResult;
}
export const newResults = (): Results => ({ rows: [], analysis: [], failures: [], extra: {}, scale: { consumers: [], competing: [], big: [], notes: [] }, degrade: {} });

export type Run = () => Promise<RunResult>;
export type Prepare = () => Promise<void>;
/** One variant of a single-sided measurement: [label, count, prepare, run]. */
export type Variant = [label: string, count: number, prepare: Prepare, run: Run];

/** What main sets up once and every section works with. */
export interface Bench {
  ctx: Ctx;
  model: ChannelModel;
  /** A channel for declaring queues, with the timing probe installed. */
  admin: Channel;
  names: NameBook;
  results: Results;
  /** The consume section's topology, also consumed by the analysis section. */
  consumeTopo: Names;
  /** A JSON body of about this many bytes (1 KB and 16 KB made once). */
  body: (size: number) => Buffer;
  /** Purges the queue, preloads it with `count` bodies of `size` and waits until the broker holds them. */
  loadQueue: (queue: string, size: number, count: number, props?: (i: number) => Options.Publish) => Prepare;
  /** loadQueue for a topology's main queue. */
  load: (topo: Names, size: number, count: number) => Prepare;
  /** A real first-delivery msg: the analysis section captures it, the nodered section sends it (a made-up one without it). */
  capturedMsg?: Msg;
}
