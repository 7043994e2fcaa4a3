/**
 * The bench's options (command line and environment), message counts and constants, read once at
 * start: what every section and the report take their sizes from.
 */
const argv = process.argv.slice(2);
export const SMOKE = process.env.BENCH_SMOKE === '1' || argv.includes('--smoke');
const onlyArg = argv.find((a) => a.startsWith('--only='));
const ONLY = onlyArg ? new Set(onlyArg.slice('--only='.length).split(',')) : undefined;
export const REPS = SMOKE ? 1 : Math.max(1, Number(process.env.BENCH_REPS ?? 5));
/**
 * `--consume=16k:100,1k:1` (or BENCH_CONSUME): only these consume+ack cases (size:prefetch), and only
 * their sizes in the analysis section. For single-scenario runs on a shared machine.
 */
const consumeArg = argv.find((a) => a.startsWith('--consume='))?.slice('--consume='.length) ?? process.env.BENCH_CONSUME;
const CONSUME_CASES = consumeArg?.split(',').map((c) => {
  const [size = '', prefetch = ''] = c.split(':');
  return { size: Number.parseInt(size, 10) * (/k$/i.test(size) ? 1024 : 1), prefetch: Number(prefetch) };
});
export const wantCase = (size: number, prefetch?: number): boolean =>
  !CONSUME_CASES || CONSUME_CASES.some((c) => c.size === size && (prefetch === undefined || !c.prefetch || c.prefetch === prefetch));
export const TTL_MS = 200;

/** Message counts per run: large enough that a full run takes seconds, tiny in smoke mode. */
const n = (full: number, smoke: number): number => (SMOKE ? smoke : full);
export const PLAN = {
  consume: [
    { size: 1024, prefetch: 1, count: n(20000, 200) },
    { size: 1024, prefetch: 10, count: n(15000, 300) },
    { size: 1024, prefetch: 100, count: n(30000, 500) },
    { size: 16384, prefetch: 1, count: n(10000, 100) },
    { size: 16384, prefetch: 10, count: n(12000, 200) },
    { size: 16384, prefetch: 100, count: n(16000, 300) },
  ].filter((c) => wantCase(c.size, c.prefetch)),
  analysis: n(20000, 500),
  analysis16k: n(8000, 200),
  peers: n(30000, 500),
  /**
   * Deliveries before each peers run's timed window: a fresh Node-RED process's optimizing compiler
   * works through its first ~30 000 messages (docs/benchmark.md); their CPU is reported apart.
   */
  peersWarmUp: n(30000, 100),
  retry: n(20000, 300),
  nativeRetry: n(20000, 300),
  lag: { count: n(1500, 100), rate: n(500, 200) },
  park: n(8000, 300),
  publish: n(10000, 300),
  nodered: n(50000, 2000),
  memory: { batches: n(10, 2), batchSize: n(20000, 500) },
  warmup: n(3000, 300),
  /** Long enough that a run is timed for seconds, not a fraction of one (at 10 000 the memory key moved 0.85–0.98 with the same code). */
  dedupe: n(30000, 300),
  outboxRelay: n(10000, 300),
  outboxWrite: n(3000, 200),
  outboxLatency: n(300, 30),
  /** Commit → consumer at a sustained rate: 10 writers, 1 000 events/s in all, for this many seconds. */
  outboxRate: { writers: 10, rate: 1000, seconds: n(10, 2) },
  /** Parked 1 KB messages grouped by reason (the target: 100 000 in ≤ 10 s and ≤ 100 MiB). */
  parkingGroup: n(100_000, 1000),
  /**
   * Batch consumption (issue 51), batches of 500: into PostgreSQL in batches and one INSERT a message
   * (slower: fewer), consume → ack without a database in batches and one msg a message, in batches with
   * and without PostgreSQL deduplication; one batch of `memoryItems` held for the memory figure.
   */
  batch: { pg: n(30000, 1000), perMessage: n(6000, 200), cpu: n(60000, 1000), cpuPerMessage: n(30000, 500), dedupe: n(30000, 1000), memoryItems: n(5000, 500) },
  /** Ordered with a 5 ms downstream (issue 42): one queue, and 8 partitions (about 5 s each at full counts). */
  partitions: { one: n(1000, 40), partitioned: n(8000, 320) },
};
export const WINDOW = 100; // publish: msgs in flight, like prefetch 100
export const PREFETCH = 100;

/** Whether `--only=` (when given) names this section. */
export const want = (section: string): boolean => !ONLY || ONLY.has(section);
/** Progress goes to stderr; stdout carries only the report and the JSON line. */
export const log = (text: string): boolean => process.stderr.write(`${text}\n`);
export const kb = (bytes: number): string => `${Math.round(bytes / 1024)} KB`;
export const MB = 1024 * 1024;
