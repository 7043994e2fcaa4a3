/**
 * CPU profile of one benchmark case (V8's sampling profiler, the one `node --cpu-prof` uses, started
 * through node:inspector around the measured run only, so preloading and flow setup stay out):
 *
 *   npm run build && node --expose-gc --import tsx bench/tools/profile.ts consume [count] [prefetch] [size]
 *   node --expose-gc --import tsx bench/tools/profile.ts raw | work | later | batched | session | consume | park | publish | retry | nodered
 *   node --expose-gc --import tsx bench/tools/profile.ts dedupe-none | dedupe-memory | dedupe-redis | dedupe-postgres | dedupe-redis-raw | dedupe-postgres-raw [count]   (consume with deduplication, every id new; -raw: a careful hand-written consumer, lib/dedupe-raw.ts)
 *   node --expose-gc --import tsx bench/tools/profile.ts outbox | outbox-raw | outbox-hand [count]   (the relay from the NOTIFY on rows written before, or raw amqplib publishing them, or the hand-written pipelined relay, lib/relay-raw.ts)
 *   node --expose-gc --import tsx bench/tools/profile.ts nodered-alone | retry-nodered | publish-nodered   (Node-RED alone, lib/nodered-alone.ts)
 *   node --expose-gc --import tsx bench/tools/profile.ts batch-raw | batch-raw-buffer [count]   (the floor: raw amqplib at prefetch 1000 in batches of 500, each body JSON-decoded or not, one multiple ack a batch, lib/batch-floor.ts)
 *   node --expose-gc --import tsx bench/tools/profile.ts batch | batch-dedupe-none | batch-dedupe-postgres | batch-pg | batch-pg-single | batch-pg-raw [count]   (batch mode, lib/batch-scenarios.ts: consume → ack in batches of 500, with deduplication or not; → one multi-row INSERT a batch; the same flow one INSERT a message; the hand-written amqplib + pg batch consumer)
 *   node --import tsx bench/tools/profile.ts --summarize some.cpuprofile [count]   (a profile from node --cpu-prof)
 *
 *   BENCH_NO_PROFILE=1 node --expose-gc --import tsx bench/tools/profile.ts consume 4000 1   (the same run without the profiler: msg/s and CPU only)
 *   BENCH_HEAP=1 node --expose-gc --import tsx bench/tools/profile.ts consume 20000   (sampling heap profiler instead: bytes allocated per message, by function)
 *   BENCH_WARMUP=3 node --expose-gc --import tsx bench/tools/profile.ts retry 6000   (3 unprofiled runs first, as the bench's median run is warm)
 *
 * Writes bench/profiles/<case>.cpuprofile (open it in Chrome DevTools or VS Code) and prints self
 * time by origin (package dist/ vs Node-RED vs amqplib vs node internals vs GC), the top functions
 * and the package's functions by inclusive time, each also per message.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';
import type { Channel } from 'amqplib';
import type { Names } from '../../test/helpers/flows';
import { AMQP_URL, NameBook, connect, fullGc, installProbe, makeBody, messageProperties, preload, purge, waitForCount, type RunResult, runTool } from '../lib/common';
import { RUNTIME_DESCRIPTION, packageNodes } from '../lib/nodered';
import * as P from '../lib/outbox-pipeline';
import * as S from '../lib/scenarios';
import { dedupeConsume, dropTable, prepareOutbox } from '../lib/store-scenarios';
import { rawDedupe } from '../lib/dedupe-raw';
import { rawPipelinedRelay } from '../lib/relay-raw';
import { batchConsumer, pkgBatchPg, prepareRows } from '../lib/batch-scenarios';
import { rawBatchConsume } from '../lib/batch-floor';
import { rawBatchPg } from '../lib/batch-raw';
import { formatHeapSummary, formatSummary, summarize, summarizeHeap, type CpuProfile, type HeapProfile } from './cpuprofile';

const [what = 'consume', countArg, prefetchArg, sizeArg] = process.argv.slice(2);

function post<T>(session: Session, method: string, params: object = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    session.post(method, params, (err, result) => {
      if (err) reject(err);
      else resolve(result as T);
    });
  });
}

/** Writes a profile to bench/profiles/<name>; returns its path. */
function written(name: string, profile: object): string {
  const dir = path.join(__dirname, '..', 'profiles');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(profile));
  return file;
}

/** What each case needs before its run: the queue preloaded (every run its own ids, or not), the publish queue, the outbox table, the batch rows table. */
function preparers({ ctx, admin, names, topo, count, body }: { ctx: S.Ctx; admin: Channel; names: NameBook; topo: Names; count: number; body: Buffer }) {
  const { model } = ctx;
  const prepared = async (): Promise<void> => {
    await S.declareTopology(ctx, topo);
    await purge(model, topo.mainQueue);
    await preload(model, topo.mainQueue, count, body);
    await waitForCount(model, topo.mainQueue, count);
  };
  // Every run its own message ids, as the bench's dedupe section: a key seen before would be a duplicate.
  const preparedIds = async (): Promise<void> => {
    const run = Math.random().toString(36).slice(2, 8);
    await S.declareTopology(ctx, topo);
    await purge(model, topo.mainQueue);
    await preload(model, topo.mainQueue, count, body, (i) => ({ ...messageProperties(i), messageId: `${run}-${i}` }));
    await waitForCount(model, topo.mainQueue, count);
  };
  const queue = names.queue('publish');
  const publishQueue = async (): Promise<void> => {
    await admin.assertQueue(queue, { durable: true });
  };
  const table = `bench_prof_outbox_${process.pid}`;
  // As the bench's outbox section: a queue that is not durable (the events are persistent, not written to disk by a transient queue).
  const eventQueue = names.queue('outbox-events');
  const outboxTable = async (): Promise<void> => {
    await admin.assertQueue(eventQueue, { durable: false });
    await purge(model, eventQueue);
    await prepareOutbox(table);
  };
  const rows = `bench_prof_batch_${process.pid}`;
  const batchRows = { rows, outbox: `${rows}_outbox` };
  const preparedRows = async (): Promise<void> => {
    await prepareRows(rows);
    await prepared();
  };
  return { prepared, preparedIds, queue, publishQueue, table, eventQueue, outboxTable, rows, batchRows, preparedRows };
}

/** Runs the selected case (warm runs first), then once more under the CPU profiler (or the heap sampler, or none); writes and summarizes its profile. */
async function profiled(session: Session, selected: [() => Promise<void>, () => Promise<RunResult>], name: string, label: string, count: number): Promise<void> {
  // Warm runs first (BENCH_WARMUP=n), as the bench's median run is: JIT done, the flow deployed before.
  for (let i = 0; i < Number(process.env.BENCH_WARMUP ?? 0); i += 1) {
    await selected[0]();
    const warm = await selected[1]();
    process.stdout.write(`# warm-up ${i + 1}: ${Math.round(warm.msgPerSec)} msg/s, ${warm.cpuUsPerMsg.toFixed(1)} µs CPU/msg\n`);
  }
  await selected[0]();
  fullGc();
  if (process.env.BENCH_NO_PROFILE) {
    const result = await selected[1]();
    process.stdout.write(`# ${label}, no profiler: ${Math.round(result.msgPerSec)} msg/s, ${result.cpuUsPerMsg.toFixed(1)} µs CPU/msg\n`);
    return;
  }
  if (process.env.BENCH_HEAP) {
    // Sampling heap profiler, objects already collected kept in: what the run allocates, by function.
    await post(session, 'HeapProfiler.enable');
    await post(session, 'HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    const result = await selected[1]();
    const { profile } = await post<{ profile: HeapProfile }>(session, 'HeapProfiler.stopSampling');
    const file = written(`${name}.heapprofile`, profile);
    process.stdout.write(`# written: ${path.relative(process.cwd(), file)} (open it in Chrome DevTools' Memory tab)\n`);
    process.stdout.write(`# heap: ${label}: ${Math.round(result.msgPerSec)} msg/s (under the sampler)\n`);
    process.stdout.write(`${formatHeapSummary(summarizeHeap(profile), count)}\n`);
    return;
  }
  await post(session, 'Profiler.start');
  const result = await selected[1]();
  const { profile } = await post<{ profile: CpuProfile }>(session, 'Profiler.stop');
  const file = written(`${name}.cpuprofile`, profile);
  process.stdout.write(`# profile: ${label}\n# ${RUNTIME_DESCRIPTION}\n`);
  process.stdout.write(`# run: ${Math.round(result.msgPerSec)} msg/s, ${result.cpuUsPerMsg.toFixed(1)} µs CPU/msg (under the profiler)\n# written: ${path.relative(process.cwd(), file)}\n`);
  process.stdout.write(`${formatSummary(summarize(profile), count)}\n`);
}

async function main(): Promise<void> {
  if (what === '--summarize') {
    const profile = JSON.parse(readFileSync(String(countArg), 'utf8')) as CpuProfile;
    process.stdout.write(`${formatSummary(summarize(profile), prefetchArg ? Number(prefetchArg) : undefined)}\n`);
    return;
  }
  const count = Number(countArg ?? (what === 'nodered' ? 100_000 : 40_000));
  const prefetch = Number(prefetchArg ?? 100);
  const size = Number(sizeArg ?? 1024);
  packageNodes();
  S.consumerSessionClass();
  const names = new NameBook('bench-prof');
  const model = await connect('bench profile admin');
  const admin = await model.createChannel();
  admin.on('error', () => undefined);
  installProbe(admin);
  const ctx: S.Ctx = { url: AMQP_URL, model, body1k: makeBody(1024) };
  const body = Buffer.from(JSON.stringify(makeBody(size)));
  const topo = names.topology(what);
  const session = new Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: 100 });
  try {
    const { prepared, preparedIds, queue, publishQueue, table, eventQueue, outboxTable, rows, batchRows, preparedRows } = preparers({ ctx, admin, names, topo, count, body });
    const cases: Record<string, [() => Promise<void>, () => Promise<RunResult>]> = {
      raw: [prepared, () => S.rawConsume(ctx, { queue: topo.mainQueue, count, prefetch })],
      work: [prepared, () => S.rawConsume(ctx, { queue: topo.mainQueue, count, prefetch, work: 'msg' })],
      later: [prepared, () => S.rawConsume(ctx, { queue: topo.mainQueue, count, prefetch, work: 'msg-later' })],
      batched: [prepared, () => S.rawConsume(ctx, { queue: topo.mainQueue, count, prefetch, work: 'msg-later-batched' })],
      session: [prepared, () => S.sessionConsume(ctx, { topo, count, prefetch })],
      consume: [prepared, () => S.pkgConsume(ctx, { topo, count, prefetch })],
      retry: [prepared, () => S.retryThroughput(ctx, 'pkg', { topo, count, prefetch })],
      'retry-raw': [prepared, () => S.retryThroughput(ctx, 'raw', { topo, count, prefetch })],
      'retry-batched': [prepared, () => S.retryThroughput(ctx, 'raw-batched', { topo, count, prefetch })],
      'nodered-alone': [prepared, () => S.nodeRedAloneConsume(ctx, { queue: topo.mainQueue, count, prefetch })],
      'retry-nodered': [prepared, () => S.retryThroughput(ctx, 'nodered', { topo, count, prefetch })],
      'dedupe-none': [preparedIds, () => dedupeConsume(ctx, { topo, count, prefetch, kind: 'none' })],
      'dedupe-memory': [preparedIds, () => dedupeConsume(ctx, { topo, count, prefetch, kind: 'memory' })],
      'dedupe-redis': [preparedIds, () => dedupeConsume(ctx, { topo, count, prefetch, kind: 'redis' })],
      'dedupe-redis-raw': [preparedIds, () => rawDedupe({ kind: 'redis', queue: topo.mainQueue, count, prefetch })],
      'dedupe-postgres-raw': [preparedIds, () => rawDedupe({ kind: 'postgres', queue: topo.mainQueue, count, prefetch })],
      'dedupe-postgres': [preparedIds, () => dedupeConsume(ctx, { topo, count, prefetch, kind: 'postgres' })],
      batch: [prepared, () => S.pkgConsume(ctx, { topo, count, prefetch, consumer: batchConsumer() })],
      'batch-raw': [prepared, () => rawBatchConsume({ queue: topo.mainQueue, count })],
      'batch-raw-buffer': [prepared, () => rawBatchConsume({ queue: topo.mainQueue, count, decode: false })],
      'batch-dedupe-none': [preparedIds, () => dedupeConsume(ctx, { topo, count, prefetch, kind: 'none', more: batchConsumer() })],
      'batch-dedupe-postgres': [preparedIds, () => dedupeConsume(ctx, { topo, count, prefetch, kind: 'postgres', more: batchConsumer() })],
      'batch-pg': [preparedRows, () => pkgBatchPg(ctx, { topo, tables: batchRows, count, prefetch, batch: true })],
      'batch-pg-single': [preparedRows, () => pkgBatchPg(ctx, { topo, tables: batchRows, count, prefetch, batch: false })],
      'batch-pg-raw': [preparedRows, () => rawBatchPg({ queue: topo.mainQueue, table: rows, count })],
      park: [prepared, () => S.pkgPark(ctx, { topo, count, prefetch })],
      publish: [publishQueue, () => S.pkgPublish(ctx, { queue, count, window: prefetch, payload: ctx.body1k })],
      outbox: [outboxTable, () => P.pkgRelayFromNotify(ctx, { table, queue: eventQueue, count, body })],
      'outbox-delete': [outboxTable, () => P.pkgRelayFromNotify(ctx, { table, queue: eventQueue, count, body, deleteSent: true })],
      'outbox-hand': [outboxTable, () => rawPipelinedRelay({ model, table, queue: eventQueue, count, body })],
      'outbox-raw': [outboxTable, () => P.rawPublishEvents({ model, queue: eventQueue, count, body, batch: 100 })],
      'publish-nodered': [publishQueue, () => S.nodeRedAlonePublish(ctx, { queue, count, window: prefetch, payload: ctx.body1k })],
      nodered: [
        () => Promise.resolve(),
        () =>
          S.nodeRedPair({
            count,
            window: prefetch,
            makeMsg: () => ({ payload: ctx.body1k, topic: 'q', amqp: { deliveryId: 'config:1', properties: {}, headers: {} }, retry: { attempt: 1, deaths: [] } }),
          }),
      ],
    };
    const selected = cases[what];
    if (!selected) throw new Error(`unknown case '${what}': one of ${Object.keys(cases).join(', ')}`);
    await profiled(session, selected, `${what}-${size}-p${prefetch}`, `${what}, ${count} msgs of ${size} B, prefetch/window ${prefetch}`, count);
  } finally {
    session.disconnect();
    if (what.startsWith('outbox')) await dropTable(`bench_prof_outbox_${process.pid}`).catch(() => undefined);
    if (what.startsWith('batch-pg')) for (const t of [`bench_prof_batch_${process.pid}`, `bench_prof_batch_${process.pid}_outbox`]) await dropTable(t).catch(() => undefined);
    await names.cleanup();
    await model.close().catch(() => undefined);
  }
}

runTool(main);
