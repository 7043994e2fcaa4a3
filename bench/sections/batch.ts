/**
 * Batch consumption (issue 51, lib/batch-scenarios.ts): the package's consumer in batches of 500
 * writing one multi-row INSERT a batch into PostgreSQL, against the same flow one INSERT a message and
 * against a hand-written amqplib + pg batch consumer, and that one against a hand-written consumer
 * doing one INSERT a message (lib/batch-raw.ts); client CPU per item in batches against per message
 * (no database), beside the floor (raw amqplib in the same batches, lib/batch-floor.ts); batches with
 * PostgreSQL deduplication against the same without it, and the same pair hand-written; and the
 * memory one batch of 5 000 × 1 KB held in the flow adds (lib/batch-memory.ts). Each group's sides
 * alternate (harness.ts `variants`), each side warmed up once first, not recorded.
 */
import { randomBytes } from 'node:crypto';
import { messageProperties, type RunResult } from '../lib/common';
import { batchMemory } from '../lib/batch-memory';
import { rawBatchConsume } from '../lib/batch-floor';
import { batchConsumer, pkgBatchPg, prepareRows, truncateRows, type BatchTables } from '../lib/batch-scenarios';
import { rawBatchDedupe, rawBatchPg, rawPerMessagePg } from '../lib/batch-raw';
import type { BatchResult } from '../lib/batch-result';
import * as S from '../lib/scenarios';
import * as D from '../lib/store-scenarios';
import { PLAN, PREFETCH } from '../config';
import { variants } from '../harness';
import type { Bench, Prepare, Variant } from '../types';
import type { Names } from '../../test/helpers/flows';

/** Runs each side once at the warm-up count (`sides(true)`, not recorded), then the full ones round-robin, REPS times (`variants`). */
async function warmedVariants(group: string, sides: (warmUp: boolean) => Variant[]): Promise<RunResult[][]> {
  for (const [, , prepare, run] of sides(true)) {
    await prepare();
    await run();
  }
  return variants(group, sides(false));
}

async function pgRuns(b: Bench, topo: Names, tables: BatchTables, result: BatchResult): Promise<void> {
  const prep = (n: number): Prepare => async () => {
    await truncateRows(tables.rows);
    await b.load(topo, 1024, n)();
  };
  const sides = (warmUp: boolean): Variant[] => {
    const [n, m] = warmUp ? [PLAN.warmup, PLAN.warmup] : [PLAN.batch.pg, PLAN.batch.perMessage];
    return [
      ['package, batches of 500 → 1 INSERT each', n, prep(n), () => pkgBatchPg(b.ctx, { topo, tables, count: n, prefetch: PREFETCH, batch: true })],
      ['package, 1 INSERT a message', m, prep(m), () => pkgBatchPg(b.ctx, { topo, tables, count: m, prefetch: PREFETCH, batch: false })],
      ['hand-written amqplib + pg, batches of 500', n, prep(n), () => rawBatchPg({ queue: topo.mainQueue, table: tables.rows, count: n })],
      [`hand-written amqplib + pg, 1 INSERT a message (prefetch ${PREFETCH}, pool 10)`, m, prep(m), () => rawPerMessagePg({ queue: topo.mainQueue, table: tables.rows, count: m, prefetch: PREFETCH })],
    ];
  };
  const [batch = [], single = [], handWritten = [], handWrittenPerMessage = []] = await warmedVariants('batch → PostgreSQL', sides);
  result.pg = { batch, perMessage: single, handWritten, handWrittenPerMessage };
}

async function cpuRuns(b: Bench, topo: Names, result: BatchResult): Promise<void> {
  const sides = (warmUp: boolean): Variant[] => {
    const [n, m] = warmUp ? [PLAN.warmup, PLAN.warmup] : [PLAN.batch.cpu, PLAN.batch.cpuPerMessage];
    return [
      ['package consume → ack, batches of 500', n, b.load(topo, 1024, n), () => S.pkgConsume(b.ctx, { topo, count: n, prefetch: PREFETCH, consumer: batchConsumer() })],
      [`package consume → ack, one msg a message, prefetch ${PREFETCH}`, m, b.load(topo, 1024, m), () => S.pkgConsume(b.ctx, { topo, count: m, prefetch: PREFETCH })],
      ['raw amqplib in batches of 500 (the floor)', n, b.load(topo, 1024, n), () => rawBatchConsume({ queue: topo.mainQueue, count: n })],
    ];
  };
  const [batch = [], perMessage = [], raw = []] = await warmedVariants('batch CPU', sides);
  result.cpu = { batch, perMessage, raw };
}

async function dedupeRuns(b: Bench, topo: Names, result: BatchResult): Promise<void> {
  // Every run its own message ids: a key seen in an earlier run would be a duplicate.
  const prep = (n: number): Prepare => () => {
    const run = randomBytes(3).toString('hex');
    return b.loadQueue(topo.mainQueue, 1024, n, (i) => ({ ...messageProperties(i), messageId: `${run}-${i}` }))();
  };
  const sides = (warmUp: boolean): Variant[] => {
    const n = warmUp ? PLAN.warmup : PLAN.batch.dedupe;
    const queue = topo.mainQueue;
    return [
      ...(['none', 'postgres'] as const).map((kind): Variant => [`package, batches of 500, deduplication: ${kind}`, n, prep(n), () => D.dedupeConsume(b.ctx, { topo, count: n, prefetch: PREFETCH, kind, more: batchConsumer() })]),
      ['hand-written amqplib, batches of 500, no deduplication', n, prep(n), () => rawBatchDedupe({ queue, count: n, dedupe: false })],
      ['hand-written amqplib + pg, batches of 500, deduplication in 2 statements a batch', n, prep(n), () => rawBatchDedupe({ queue, count: n, dedupe: true })],
    ];
  };
  const [none = [], postgres = [], rawNone = [], rawPostgres = []] = await warmedVariants('batch dedupe', sides);
  result.dedupe = { none, postgres, rawNone, rawPostgres };
}

export async function batch(b: Bench): Promise<void> {
  const why = await D.storesAnswer();
  if (why) throw new Error(`skipped: ${why}`);
  const topo = b.names.topology('batch');
  await S.declareTopology(b.ctx, topo);
  const tag = randomBytes(4).toString('hex');
  const tables: BatchTables = { rows: `bench_batch_${tag}`, outbox: `bench_batch_outbox_${tag}` };
  const { pg, perMessage, cpu, cpuPerMessage, dedupe } = PLAN.batch;
  const result: BatchResult = { counts: { pg, perMessage, cpu, cpuPerMessage, dedupe } };
  b.results.extra.batch = result;
  await prepareRows(tables.rows);
  try {
    await pgRuns(b, topo, tables, result);
    await cpuRuns(b, topo, result);
    await dedupeRuns(b, topo, result);
    result.memory = await batchMemory(b.ctx, { model: b.model, topo, items: PLAN.batch.memoryItems, body: b.body(1024) });
  } finally {
    await D.dropTable(tables.rows).catch(() => undefined);
    await D.dropTable(tables.outbox).catch(() => undefined);
  }
}
