/**
 * The package's per-message code without a broker or Node-RED: a ConsumerSession (dist/lib, or
 * BENCH_DIST) on a fake connection whose channel records acks instead of writing them. Deliveries
 * are injected through the consumer callback the session registered, and each is settled (ack) the
 * way retry-settle does, `inFlight` at a time like a prefetch. What remains is the package's own
 * cost per delivery: decode, x-death parsing, registry, timers, stats events, settle.
 *
 *   npm run build && node --expose-gc --import tsx bench/tools/micro.ts [deliveries] [inFlight]
 *   BENCH_DIST=/path/to/other/dist node --expose-gc --import tsx bench/tools/micro.ts      (compare a change)
 *   BENCH_MICRO_CASES=buffer BENCH_MICRO_REPS=1 valgrind --tool=callgrind node --single-threaded --import tsx bench/tools/micro.ts 20000
 *     (one case, one run; run two counts and divide the difference by the difference of deliveries to
 *     cancel the start-up. `--single-threaded` keeps V8's compilers on the main thread: without it the
 *     count depends on when they finish, and moves with the machine's load; with it a repeat is within
 *     about 1.5 k instructions per delivery at 40 000 deliveries)
 *
 * Prints ns per delivery+settle for a few option sets (median of 7 runs). Uses only the session's
 * public API and the connection interface it consumes (createChannel, withThrowawayChannel, ...).
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fullGc, makeBody, median, runTool } from '../lib/common';
import { distLib, distRoot, packageNodes, type Msg } from '../lib/nodered';
import { consumerSessionClass } from '../lib/scenarios';

const [countArg, inFlightArg] = process.argv.slice(2);
const COUNT = Number(countArg ?? 200_000);
const IN_FLIGHT = Number(inFlightArg ?? 100);
/** Only the cases whose label contains this text (all by default); the no-package baselines run only without a filter. */
const CASES = process.env.BENCH_MICRO_CASES ?? '';
const REPS = Number(process.env.BENCH_MICRO_REPS ?? 7);

type Deliver = (message: Msg | null) => void;

class FakeChannel extends EventEmitter {
  /** Acks written (one multiple-ack is one), and the highest delivery tag acked. */
  acks = 0;
  highestAcked = -1;
  consumer: Deliver | undefined;
  prefetch(): Promise<void> {
    return Promise.resolve();
  }
  consume(_queue: string, callback: Deliver): Promise<{ consumerTag: string }> {
    this.consumer = callback;
    return Promise.resolve({ consumerTag: 'amq.ctag-micro' });
  }
  ack(message: Msg): void {
    this.acks += 1;
    this.highestAcked = Math.max(this.highestAcked, (message.fields as { deliveryTag: number }).deliveryTag);
  }
  /** A dead-letter nack (the retry path's first delivery): settles like an ack here. */
  nack(message: Msg): void {
    this.ack(message);
  }
  cancel(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  assertExchange(): Promise<object> {
    return Promise.resolve({});
  }
  assertQueue(queue: string): Promise<object> {
    return Promise.resolve({ queue, messageCount: 0, consumerCount: 0 });
  }
  checkQueue(queue: string): Promise<object> {
    return Promise.resolve({ queue, messageCount: 0, consumerCount: 0 });
  }
  bindQueue(): Promise<object> {
    return Promise.resolve({});
  }
}

class FakeConnection extends EventEmitter {
  channel = new FakeChannel();
  connection = {}; // "connected"
  createChannel(): Promise<FakeChannel> {
    return Promise.resolve(this.channel);
  }
  withThrowawayChannel<T>(work: (channel: FakeChannel) => T): T {
    return work(new FakeChannel());
  }
  publisher(): Promise<never> {
    return Promise.reject(new Error('no publishing in the micro benchmark'));
  }
}

const def = {
  id: 'config',
  type: 'retry-config',
  mode: 'declare',
  mainExchange: '',
  mainQueue: 'micro',
  routingKeys: '',
  retryExchange: '',
  retryDelay: '200',
  maxAttempts: '3',
  mainQueueArgs: '{}',
  retryQueueArgs: '{}',
  parkingQueueArgs: '{}',
};

/** The headers of a delivery back from the retry queue (RabbitMQ 3.x/4.x, as amqplib decodes them): attempt 2. */
const RETRIED_HEADERS = {
  source: 'bench',
  'x-death': [
    { count: 1, reason: 'expired', queue: 'micro.retry', time: { '!': 'timestamp', value: 1714564801 }, exchange: 'micro.retry-exchange', 'routing-keys': ['micro'] },
    { count: 1, reason: 'rejected', queue: 'micro', time: { '!': 'timestamp', value: 1714564800 }, exchange: '', 'routing-keys': ['micro'] },
  ],
  'x-first-death-exchange': '',
  'x-first-death-queue': 'micro',
  'x-first-death-reason': 'rejected',
  'x-last-death-exchange': 'micro.retry-exchange',
  'x-last-death-queue': 'micro.retry',
  'x-last-death-reason': 'expired',
};

function message(i: number, content: Buffer, retried = false): Msg {
  return {
    content,
    fields: { deliveryTag: i, redelivered: false, exchange: retried ? 'micro.retry-exchange' : '', routingKey: 'micro', consumerTag: 'amq.ctag-micro' },
    properties: { contentType: 'application/json', deliveryMode: 1, messageId: `m-${i}`, correlationId: `c-${i}`, timestamp: 1714564800, headers: retried ? RETRIED_HEADERS : { source: 'bench' } },
  };
}

packageNodes();
const ConsumerSession = consumerSessionClass();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- compiled CommonJS of the build under test
const { topologyFromDefinition } = require(path.join(distRoot, 'nodes/shared/retry-config-node.js')) as { topologyFromDefinition: (d: object) => object };

/** `retried`: every delivery carries the x-death of attempt 2; `'path'`: the retry path, each message a first delivery dead-lettered by a retry, then its return (attempt 2) acked. */
async function run(options: Options, content: Buffer, retried: boolean | 'path' = false, roundTrips = false): Promise<{ ns: number; statsEvents: number }> {
  const connection = new FakeConnection();
  const session = new ConsumerSession({
    connection,
    copies: { publish: () => Promise.resolve() },
    topology: topologyFromDefinition(def),
    prefetch: IN_FLIGHT,
    settleTimeoutMs: 60_000,
    decode: 'auto',
    invalidBody: 'park',
    ...(typeof options === 'function' ? options() : options),
  });
  let statsListener = 0;
  session.deliveries.on('changed', () => {
    statsListener += 1; // like retry-consumer: schedules a status update, reads nothing
  });
  const waiting: Array<{ id: string; action: 'ack' | 'retry' }> = [];
  session.deliveries.on('message', (delivered) => waiting.push({ id: String(delivered.amqp.deliveryId), action: delivered.retry.attempt === 1 && retried === 'path' ? 'retry' : 'ack' }));
  session.start();
  for (let i = 0; i < 100 && !connection.channel.consumer; i += 1) await new Promise((resolve) => setImmediate(resolve));
  const deliver = connection.channel.consumer;
  if (!deliver) throw new Error('the session did not start consuming on the fake connection');
  fullGc();
  const t0 = performance.now();
  let sent = 0;
  const pending: Array<Promise<unknown>> = [];
  while (sent < COUNT) {
    // A burst of deliveries (one socket read), then the flow settles them all.
    let burst = 0;
    for (let k = 0; k < IN_FLIGHT && sent < COUNT; k += 1, sent += 1, burst += 1) deliver(message(sent, content, retried === 'path' ? sent % 2 === 1 : retried));
    if (roundTrips) {
      // A store with round trips: the burst reaches the flow a turn or two later; its acks are recorded with the next burst's claims.
      for (let i = 0; i < 100 && waiting.length < burst; i += 1) await new Promise((resolve) => setImmediate(resolve));
      pending.push(...waiting.splice(0).map(({ id, action }) => session.deliveries.settle(id, action)));
      continue;
    }
    const settles = waiting.splice(0);
    await Promise.all(settles.map(({ id, action }) => session.deliveries.settle(id, action)));
  }
  await Promise.all(pending);
  // Deduplicated deliveries reach the flow a few microtasks after arrival: settle the last ones too.
  for (let i = 0; i < 100 && connection.channel.highestAcked !== COUNT - 1; i += 1) {
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(waiting.splice(0).map(({ id, action }) => session.deliveries.settle(id, action)));
  }
  const ns = ((performance.now() - t0) * 1e6) / COUNT;
  await session.stop();
  // Acks are batched (multiple-acks), so check the last delivery was covered rather than count them.
  if (connection.channel.highestAcked !== COUNT - 1) throw new Error(`expected the last delivery (${COUNT - 1}) acked, got ${connection.channel.highestAcked}`);
  return { ns, statsEvents: statsListener / COUNT };
}

/**
 * The same loop without the package: JSON.parse of each body, the result either dropped at once (a
 * raw consumer that acks in its callback) or held until its batch is settled, as a flow holds its msg
 * until the settle node. The difference is the cost of keeping parsed payloads alive (GC), which any
 * consumer that hands a message to a flow and settles it later pays.
 */
async function baseline(hold: boolean, content: Buffer): Promise<number> {
  const held: unknown[] = [];
  let sink = 0;
  fullGc();
  const t0 = performance.now();
  let sent = 0;
  while (sent < COUNT) {
    for (let k = 0; k < IN_FLIGHT && sent < COUNT; k += 1) {
      const m = message(sent++, content) as { content: Buffer };
      const payload = JSON.parse(m.content.toString('utf8')) as unknown;
      if (hold) held.push(payload, m);
      else sink += payload === null ? 0 : 1;
    }
    // One async hop per batch, as the package's settles are awaited.
    await new Promise((resolve) => setImmediate(resolve));
    sink += held.length;
    held.length = 0;
  }
  if (sink < 0) throw new Error('unreachable');
  return ((performance.now() - t0) * 1e6) / COUNT;
}

type Options = Record<string, unknown> | (() => Record<string, unknown>);

/** Deduplication in a memory store, new for every run (every key new). */
function memoryDedupe(): Record<string, unknown> {
  const { MemoryDedupeStore, messageIdKey } = distLib('dedupe/index') as { MemoryDedupeStore: new () => object; messageIdKey: unknown };
  return { dedupe: { store: new MemoryDedupeStore(), keyOf: messageIdKey, noKey: 'process', storeDown: 'pause', leaseMs: 300_000, retentionMs: 86_400_000 } };
}

/**
 * Deduplication in a store that answers a turn later (setImmediate), the memory store's semantics
 * behind it: the gate's batched round trips as with Redis, without Redis's own cost.
 */
function laterDedupe(): Record<string, unknown> {
  type Inner = Record<'claim' | 'complete' | 'release' | 'exchange', (...args: unknown[]) => Promise<unknown>>;
  const { MemoryDedupeStore, messageIdKey } = distLib('dedupe/index') as { MemoryDedupeStore: new () => Inner; messageIdKey: unknown };
  const inner = new MemoryDedupeStore();
  const later =
    (name: keyof Inner) =>
    (...args: unknown[]): Promise<unknown> =>
      new Promise((resolve, reject) => setImmediate(() => void inner[name](...args).then(resolve, reject)));
  const store = {
    description: 'memory a turn later',
    maxKeyBytes: 4096,
    prepare: () => Promise.resolve(),
    ping: () => Promise.resolve(),
    claim: later('claim'),
    complete: later('complete'),
    release: later('release'),
    exchange: later('exchange'),
    close: () => Promise.resolve(),
  };
  return { dedupe: { store, keyOf: messageIdKey, noKey: 'process', storeDown: 'pause', leaseMs: 300_000, retentionMs: 86_400_000 } };
}

const cases: Array<[string, Options, number, (boolean | 'path')?, boolean?]> = [
  ['1 KB JSON, decode auto, settle timeout 60 s (defaults)', {}, 1024],
  ['1 KB JSON, a retried delivery (x-death of attempt 2)', {}, 1024, true],
  ['1 KB JSON, retry path (retry → dead-letter, return acked)', {}, 1024, 'path'],
  ["1 KB, retry path, decode 'buffer' (the package's own work)", { decode: 'buffer' }, 1024, 'path'],
  ['1 KB JSON, settle timeout 0 (no timer)', { settleTimeoutMs: 0 }, 1024],
  ["1 KB JSON, decode 'buffer' (no JSON.parse)", { decode: 'buffer' }, 1024],
  ["1 KB, decode 'buffer', deduplicated in a memory store", () => ({ decode: 'buffer', ...memoryDedupe() }), 1024],
  ["1 KB, decode 'buffer', deduplicated, store answers a turn later", () => ({ decode: 'buffer', ...laterDedupe() }), 1024, false, true],
  ['16 KB JSON, decode auto', {}, 16384],
  ["16 KB JSON, decode 'buffer' (no JSON.parse)", { decode: 'buffer' }, 16384],
];

async function main(): Promise<void> {
  process.stdout.write(`# package per-message cost without broker or Node-RED: ${COUNT} deliveries, ${IN_FLIGHT} in flight, ${path.relative(process.cwd(), distRoot) || '.'}\n`);
  for (const [label, options, size, retried = false, roundTrips = false] of cases) {
    if (!label.includes(CASES)) continue;
    const content = Buffer.from(JSON.stringify(makeBody(size)));
    if (REPS > 1) await run(options, content, retried, roundTrips); // warm-up
    const runs: number[] = [];
    let events = 0;
    for (let r = 0; r < REPS; r += 1) {
      const result = await run(options, content, retried, roundTrips);
      runs.push(result.ns);
      events = result.statsEvents;
    }
    process.stdout.write(`${label.padEnd(56)} ${median(runs).toFixed(0).padStart(7)} ns/msg   (stats events/msg ${events.toFixed(1)})\n`);
  }
  for (const size of CASES ? [] : [1024, 16384]) {
    const content = Buffer.from(JSON.stringify(makeBody(size)));
    for (const hold of [false, true]) {
      await baseline(hold, content); // warm-up
      const runs: number[] = [];
      for (let r = 0; r < 7; r += 1) runs.push(await baseline(hold, content));
      const label = `no package: ${size / 1024} KB JSON.parse, ${hold ? 'held until its batch settles' : 'dropped at once'}`;
      process.stdout.write(`${label.padEnd(56)} ${median(runs).toFixed(0).padStart(7)} ns/msg\n`);
    }
  }
}

runTool(main);
