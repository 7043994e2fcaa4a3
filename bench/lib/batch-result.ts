/** The batch section's figures (issue 51): what it measured, its lines in the report and its keys in the JSON line. */
import { median, round, type RunResult } from './common';
import type { BatchMemory } from './batch-memory';
import { BATCH_SIZE } from './batch-scenarios';

/** Runs by side, each side's runs in repetition order. */
export interface BatchResult {
  counts: { pg: number; perMessage: number; cpu: number; cpuPerMessage: number; dedupe: number };
  /** Consume → multi-row INSERT per batch → ack; the same flow one INSERT per message; a hand-written amqplib + pg batch consumer. */
  pg?: { batch: RunResult[]; perMessage: RunResult[]; handWritten: RunResult[]; handWrittenPerMessage?: RunResult[] };
  /** Consume → ack, no database: in batches, one msg per message, and the floor: raw amqplib in the same batches (lib/batch-floor.ts). */
  cpu?: { batch: RunResult[]; perMessage: RunResult[]; raw?: RunResult[] };
  /** Consume in batches → ack, with PostgreSQL deduplication and without; the same hand-written (lib/batch-raw.ts). */
  dedupe?: { none: RunResult[]; postgres: RunResult[]; rawNone?: RunResult[]; rawPostgres?: RunResult[] };
  memory?: BatchMemory;
}

const rate = (runs: RunResult[] | undefined): number | undefined => (runs && runs.length > 0 ? median(runs.map((r) => r.msgPerSec)) : undefined);
const cpu = (runs: RunResult[] | undefined): number | undefined => (runs && runs.length > 0 ? median(runs.map((r) => r.cpuUsPerMsg)) : undefined);
const ratio = (a: number | undefined, b: number | undefined): number | undefined => (a !== undefined && b !== undefined ? a / b : undefined);

/** The figures the JSON line and the report read. */
function figures(r: BatchResult | undefined) {
  const memory = r?.memory;
  return {
    pg: rate(r?.pg?.batch),
    pgPerMessage: rate(r?.pg?.perMessage),
    pgHandWritten: rate(r?.pg?.handWritten),
    pgHandWrittenPerMessage: rate(r?.pg?.handWrittenPerMessage),
    pgCpu: cpu(r?.pg?.batch),
    pgHandWrittenCpu: cpu(r?.pg?.handWritten),
    cpuBatch: cpu(r?.cpu?.batch),
    cpuPerMessage: cpu(r?.cpu?.perMessage),
    cpuRaw: cpu(r?.cpu?.raw),
    cpuBatchRate: rate(r?.cpu?.batch),
    cpuPerMessageRate: rate(r?.cpu?.perMessage),
    dedupeNone: rate(r?.dedupe?.none),
    dedupePg: rate(r?.dedupe?.postgres),
    dedupeRawNone: rate(r?.dedupe?.rawNone),
    dedupeRawPg: rate(r?.dedupe?.rawPostgres),
    memory: memory ? memory.pkg.grown / memory.payloadBytes : undefined,
    memoryRss: memory ? memory.pkg.rssGrown / memory.payloadBytes : undefined,
    memoryRaw: memory ? memory.raw.grown / memory.payloadBytes : undefined,
    memoryBuffer: memory?.pkgBuffer ? memory.pkgBuffer.grown / memory.payloadBytes : undefined,
    memoryRawBuffer: memory?.rawBuffer ? memory.rawBuffer.grown / memory.payloadBytes : undefined,
  };
}

export function batchJson(r: BatchResult | undefined): Record<string, number | null> {
  const f = figures(r);
  return {
    batchPgVsPerMessageRatio: round(ratio(f.pg, f.pgPerMessage), 2),
    batchPgVsHandWrittenRatio: round(ratio(f.pg, f.pgHandWritten), 3),
    batchClientCpuPerItemRatio: round(ratio(f.cpuBatch, f.cpuPerMessage), 3),
    batchDedupePgRatio: round(ratio(f.dedupePg, f.dedupeNone), 3),
    batchPgHandWrittenVsPerMessageRatio: round(ratio(f.pgHandWritten, f.pgHandWrittenPerMessage), 2),
    batchDedupePgHandWrittenRatio: round(ratio(f.dedupeRawPg, f.dedupeRawNone), 3),
    batchMemoryPerPayloadRatio: round(f.memory, 2),
    batchPgMsgPerSec: round(f.pg),
    batchPgPerMessageMsgPerSec: round(f.pgPerMessage),
    batchPgHandWrittenMsgPerSec: round(f.pgHandWritten),
    batchPgHandWrittenPerMessageMsgPerSec: round(f.pgHandWrittenPerMessage),
    batchNoDatabaseMsgPerSec: round(f.cpuBatchRate),
    batchPgCpuUsPerMsg: round(f.pgCpu, 1),
    batchPgHandWrittenCpuUsPerMsg: round(f.pgHandWrittenCpu, 1),
    batchCpuUsPerItem: round(f.cpuBatch, 1),
    batchPerMessageCpuUsPerMsg: round(f.cpuPerMessage, 1),
    batchDedupePgMsgPerSec: round(f.dedupePg),
    batchNoDedupeMsgPerSec: round(f.dedupeNone),
    batchDedupePgHandWrittenMsgPerSec: round(f.dedupeRawPg),
    batchNoDedupeHandWrittenMsgPerSec: round(f.dedupeRawNone),
    batchMemoryRssPerPayloadRatio: round(f.memoryRss, 2),
    batchMemoryRawPerPayloadRatio: round(f.memoryRaw, 2),
    batchMemoryBufferPerPayloadRatio: round(f.memoryBuffer, 2),
    batchMemoryRawBufferPerPayloadRatio: round(f.memoryRawBuffer, 2),
    batchRawCpuUsPerItem: round(f.cpuRaw, 1),
  };
}

const n0 = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? 'n/a' : Math.round(x).toLocaleString('en-US'));
const n2 = (x: number | undefined, digits = 2): string => (x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(digits));

export function batchTable(r: BatchResult | undefined): string[] {
  if (!r) return [];
  const f = figures(r);
  const { counts } = r;
  const out = ['', `batch consumption (issue 51), batches of ${BATCH_SIZE}, 1 KB JSON, median of each side's runs:`];
  if (r.pg) {
    out.push(`  → PostgreSQL, one multi-row INSERT a batch (${counts.pg} msgs)   ${n0(f.pg)} msg/s, ${n2(f.pgCpu, 1)} µs/msg client CPU`);
    out.push(`    the same flow, one INSERT a message (${counts.perMessage} msgs)  ${n0(f.pgPerMessage)} msg/s   batch ×${n2(f.pg !== undefined && f.pgPerMessage !== undefined ? f.pg / f.pgPerMessage : undefined)} (target ≥ 10)`);
    out.push(`    hand-written amqplib + pg batch consumer             ${n0(f.pgHandWritten)} msg/s, ${n2(f.pgHandWrittenCpu, 1)} µs/msg   package / it ${n2(ratio(f.pg, f.pgHandWritten), 3)} (target ≥ 0.9)`);
    out.push(`    hand-written amqplib + pg, one INSERT a message      ${n0(f.pgHandWrittenPerMessage)} msg/s   hand-written batch / it ×${n2(ratio(f.pgHandWritten, f.pgHandWrittenPerMessage))}`);
  }
  if (r.cpu) {
    out.push(`  consume → ack, no database: in batches ${n2(f.cpuBatch, 1)} µs/item (${n0(f.cpuBatchRate)} msg/s, ${counts.cpu} msgs), one msg a message ${n2(f.cpuPerMessage, 1)} µs/msg (${n0(f.cpuPerMessageRate)} msg/s, ${counts.cpuPerMessage} msgs)   ratio ${n2(ratio(f.cpuBatch, f.cpuPerMessage), 3)} (target ≤ 0.5)`);
    if (r.cpu.raw) out.push(`    the floor: raw amqplib in the same batches (JSON decoded, one multiple ack a batch) ${n2(f.cpuRaw, 1)} µs/item = ${n2(ratio(f.cpuRaw, f.cpuPerMessage), 3)} of the per-message path's`);
  }
  if (r.dedupe) {
    out.push(`  in batches with PostgreSQL deduplication ${n0(f.dedupePg)} msg/s, without ${n0(f.dedupeNone)} msg/s (${counts.dedupe} msgs)   ratio ${n2(ratio(f.dedupePg, f.dedupeNone), 3)} (target ≥ 0.8)`);
    out.push(`    hand-written amqplib + pg: with ${n0(f.dedupeRawPg)} msg/s, without ${n0(f.dedupeRawNone)} msg/s   ratio ${n2(ratio(f.dedupeRawPg, f.dedupeRawNone), 3)}`);
  }
  if (r.memory) {
    const m = r.memory;
    out.push(
      `  one batch of ${m.items} × ${Math.round(m.payloadBytes / m.items)} B held in the flow: heap + external +${n2(m.pkg.grown / 1048576, 1)} MiB = ${n2(f.memory)}× its payload bytes (target ≤ 2), RSS ${n2(f.memoryRss)}×; raw amqplib holding the same deliveries decoded ${n2(f.memoryRaw)}×`,
    );
    if (m.pkgBuffer) out.push(`    the same with the bodies kept as Buffers (decode: buffer) ${n2(f.memoryBuffer)}×; raw amqplib holding the deliveries ${n2(f.memoryRawBuffer)}×`);
  }
  return out;
}
