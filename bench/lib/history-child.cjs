// @ts-check
'use strict';
/**
 * The memory of the consumers' history (issue 40), in a process of its own (started by
 * history-memory.ts with --expose-gc and an IPC channel; plain CommonJS, so it runs without tsx and
 * nothing else moves its RSS): the package's RetryMetrics from dist/, 300 consumers, every one of its
 * 1440 minutes filled (acked, retried, parked, replayed, duplicates, a parking depth; ten busy
 * consumers past 65 535 acks a minute, whose acked ring widens to 32-bit; the others' acked and depth
 * rings are 16-bit, the rest 8-bit), with a clock the bench moves minute by minute, after a warm-up on
 * a few consumers. Reports the process's RSS, heap and V8 young generation after a full GC before and
 * after, and the bytes the rings hold. Then it exits.
 */
const path = require('node:path');
const v8 = require('node:v8');

const distRoot = process.env.BENCH_DIST ? path.resolve(process.env.BENCH_DIST) : path.join(__dirname, '..', '..', 'dist');
/** @type {typeof import('../../src/lib/observe')} */
const observe = require(path.join(distRoot, 'lib', 'observe'));

const CONSUMERS = Number(process.env.BENCH_HISTORY_CONSUMERS ?? 300);
const BUSY = 10;

function fullGc() {
  const gc = /** @type {{ gc?: () => void }} */ (globalThis).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
}

const youngGen = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0;

/** Fills `consumers` consumers' whole history; returns their metrics and rings. @param {number} consumers */
function fill(consumers) {
  let now = Date.UTC(2026, 0, 1);
  const metrics = new observe.RetryMetrics(() => now);
  /** @type {import('../../src/lib/observe').MinuteRing[]} */
  const rings = [];
  for (let c = 0; c < consumers; c++) {
    const owner = { consumer: `consumer-${c}`, config: `config-${c % 30}`, queue: `orders-${c}` };
    metrics.consumer(owner);
    rings.push(metrics.history.open(owner));
  }
  const started = process.hrtime.bigint();
  for (let m = 0; m < observe.HISTORY_MINUTES; m++) {
    for (let c = 0; c < consumers; c++) {
      const ring = rings[c];
      if (!ring) continue;
      const seed = (m * 31 + c * 17) % 997;
      ring.add('acked', c < BUSY ? 70_000 + seed : 1_000 + seed);
      ring.add('retried', seed % 50);
      ring.add('parked', seed % 7);
      ring.add('replayed', seed % 3);
      ring.add('duplicates', seed % 11);
      ring.depth(seed * 3);
    }
    now += observe.MINUTE_MS;
  }
  return { metrics, rings, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

function main() {
  // The warm-up, dropped: the compiler's memory is not the history's (a running Node-RED has compiled
  // this code long before its history is full).
  fill(BUSY + 5);
  fullGc();
  const before = { ...process.memoryUsage(), young: youngGen() };
  const { metrics, rings, seconds } = fill(CONSUMERS);
  fullGc();
  const after = { ...process.memoryUsage(), young: youngGen() };
  // Served once the measure is taken: an answer is garbage as soon as it is sent.
  const served = metrics.history.read({ minutes: 60 }).length;
  const ringBytes = rings.reduce((sum, ring) => sum + ring.bytes, 0);
  process.send?.({
    type: 'result',
    consumers: CONSUMERS,
    minutes: observe.HISTORY_MINUTES,
    fillSeconds: seconds,
    served,
    ringBytes,
    rssBefore: before.rss,
    rssAfter: after.rss,
    heapBefore: before.heapUsed,
    heapAfter: after.heapUsed,
    youngBefore: before.young,
    youngAfter: after.young,
  });
}

try {
  main();
  setTimeout(() => process.exit(0), 100);
} catch (err) {
  process.send?.({ type: 'error', error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(1);
}
