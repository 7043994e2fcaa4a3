/**
 * The JSON line the bench ends with: the figures CI and the docs follow, by key. Each part below
 * is a group of keys, spread in the order the line has always had.
 */
import { round } from './lib/common';
import { BATCHED_PEER_KEY } from './lib/peers';
import { scaleJson } from './lib/scale-scenarios';
import { degradeJson } from './lib/degrade-scenarios';
import { partitionsJson } from './lib/partitions';
import { batchJson } from './lib/batch-result';
import { NATIVE_RETRY_VARIANTS } from './lib/native-retry';
import { MB, PREFETCH, REPS, SMOKE, WINDOW } from './config';
import type { Extra, MemoryRun, Results, Row, Single } from './types';

type Keys = Record<string, number | null>;
const r2 = (x: number | undefined): number | null => round(x, 3);
/** The hand-written contestant against the same "none" / raw side. */
const handWritten = (row: Row | undefined): number | undefined => (row?.batched ? row.batched.msgPerSec / row.raw.msgPerSec : undefined);

/** The native-retry section's figures for the JSON line (none where it did not run). */
function nativeRetryJson(extra: Extra): Keys {
  const nr = extra.nativeRetry;
  if (!nr || 'skipped' in nr) return {};
  const out: Keys = {};
  for (const [i, v] of NATIVE_RETRY_VARIANTS.entries()) {
    const key = v.key.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    out[`nativeRetry_${key}_msgPerSec`] = round(nr.rows[i]?.msgPerSec);
    out[`nativeRetry_${key}_cpuUsPerMsg`] = round(nr.rows[i]?.cpuUsPerMsg, 1);
  }
  return out;
}

/** How much V8's committed young generation grew (MiB): V8's sizing under load, part of the RSS growth. */
function youngGrowth(m: MemoryRun): number | null {
  return round(((m.end.newSpacePhysical ?? NaN) - (m.before.newSpacePhysical ?? NaN)) / MB, 1);
}

/**
 * The Node-RED-alone keys of each pair that has that run: `<key>NodeRedRatio` (package msg/s /
 * Node-RED alone's: the package's own share), `<key>NodeRedAloneBatchedRatio` (Node-RED alone /
 * batched raw; publish, which has no batched run: `publishNodeRedAloneRawRatio`, / raw): Node-RED's
 * share; Node-RED alone's client CPU per message and the package's over it (`<key>NodeRedCpuRatio`).
 */
function nodeRedAloneJson(pairs: Array<[key: string, row: Row | undefined, base: 'Batched' | 'Raw']>): Keys {
  const out: Keys = {};
  for (const [key, row, base] of pairs) {
    out[`${key}NodeRedRatio`] = round(row?.nodeRedRatio, 3);
    out[`${key}NodeRedAlone${base}Ratio`] = round(row?.nodeRedBaseRatio, 3);
    out[`${key}NodeRedAloneCpuUsPerMsg`] = round(row?.nodeRed?.cpuUsPerMsg, 1);
    out[`${key}NodeRedCpuRatio`] = round(row?.nodeRed ? row.pkg.cpuUsPerMsg / row.nodeRed.cpuUsPerMsg : undefined, 3);
  }
  return out;
}

/** The rows the keys are read from, found by group and label. */
function pairsOf(rows: Row[]) {
  const find = (group: string, label: string): Row | undefined => rows.find((r) => r.group === group && r.label === label);
  const group = (name: string): Row | undefined => rows.find((r) => r.group === name);
  const dedupe = (store: string): Row | undefined => find('dedupe', `${store} vs none, 1 KB, prefetch ${PREFETCH}`);
  return {
    c100: find('consume+ack', '1 KB, prefetch 100'),
    c10: find('consume+ack', '1 KB, prefetch 10'),
    c1: find('consume+ack', '1 KB, prefetch 1'),
    c16: find('consume+ack', '16 KB, prefetch 100'),
    retry: find('retry path', '1 KB, prefetch 100, 1 retry'),
    park: find('park path', '1 KB, prefetch 100'),
    pub: find('publish+confirm', `1 KB, ${WINDOW} in flight`),
    dMem: dedupe('memory'),
    dRedis: dedupe('redis'),
    dPg: dedupe('postgres'),
    relay: group('relay vs publish'),
    outboxRelay: group('outbox relay'),
    outboxWrite: group('outbox write'),
    relayDeleting: group('relay vs publish, deleting sent rows'),
  };
}
type Pairs = ReturnType<typeof pairsOf>;

function consumeKeys({ c100, c10, c1, c16 }: Pairs): Keys {
  return {
    consumeAckMsgPerSec: round(c100?.pkg.msgPerSec),
    rawConsumeAckMsgPerSec: round(c100?.raw.msgPerSec),
    consumeAckCpuUsPerMsg: round(c100?.pkg.cpuUsPerMsg, 1),
    rawConsumeAckCpuUsPerMsg: round(c100?.raw.cpuUsPerMsg, 1),
    consumeAckBrokerUsPerMsg: round(c100?.pkg.brokerUsPerMsg, 1),
    rawConsumeAckBrokerUsPerMsg: round(c100?.raw.brokerUsPerMsg, 1),
    consumeAckP10Ratio: r2(c10?.ratio),
    consumeAckP1Ratio: r2(c1?.ratio),
    consumeAck16kRatio: r2(c16?.ratio),
    consumeAckWorkRatio: r2(c100?.workRatio),
    consumeAckBatchedRatio: r2(c100?.batchedRatio),
    consumeAck16kBatchedRatio: r2(c16?.batchedRatio),
    consumeAckP1BatchedRatio: r2(c1?.batchedRatio),
    consumeAckP10BatchedRatio: r2(c10?.batchedRatio),
    rawBatchedConsumeAckCpuUsPerMsg: round(c100?.batched?.cpuUsPerMsg, 1),
    consumeAck16kWorkRatio: r2(c16?.workRatio),
    rawWorkConsumeAckCpuUsPerMsg: round(c100?.work?.cpuUsPerMsg, 1),
  };
}

function retryKeys({ retry }: Pairs, extra: Extra): Keys {
  const l = extra.lag;
  return {
    retryPathRatio: r2(retry?.ratio),
    retryPathBatchedRatio: r2(retry?.batchedRatio),
    rawBatchedRetryPathCpuUsPerMsg: round(retry?.batched?.cpuUsPerMsg, 1),
    retryPathCpuUsPerMsg: round(retry?.pkg.cpuUsPerMsg, 1),
    // Client CPU per retried message: the package / raw amqplib doing the same retry (same work, settles batched), and / raw settling one by one.
    retryPathCpuRatio: r2(retry?.batched ? retry.pkg.cpuUsPerMsg / retry.batched.cpuUsPerMsg : undefined),
    retryPathRawCpuRatio: r2(retry ? retry.pkg.cpuUsPerMsg / retry.raw.cpuUsPerMsg : undefined),
    rawRetryPathCpuUsPerMsg: round(retry?.raw.cpuUsPerMsg, 1),
    retryLagP50Ms: round(l?.pkgFlow.p50, 2),
    // Broker-native delayed retry (4.3+) vs the TTL retry path, msg/s and client µs per message, by variant.
    ...nativeRetryJson(extra),
    retryLagAmqpP99Ms: round(l?.pkgAmqp.p99, 2),
    rawRetryLagP50Ms: round(l?.raw.p50, 2),
    rawRetryLagP99Ms: round(l?.raw.p99, 2),
  };
}

function parkPublishKeys({ park, pub }: Pairs, analysis: Single[]): Keys {
  const pick = (label: string): Single | undefined => analysis.find((a) => a.label.startsWith(label));
  return {
    parkMsgPerSec: round(park?.pkg.msgPerSec),
    rawParkMsgPerSec: round(park?.raw.msgPerSec),
    publishMsgPerSec: round(pub?.pkg.msgPerSec),
    rawPublishMsgPerSec: round(pub?.raw.msgPerSec),
    sessionOnlyCpuUsPerMsg: round(pick('package ConsumerSession')?.cpuUsPerMsg, 1),
    nodeRedHopCpuUsPerMsg: round(pick('source → sink, consumer-shaped msg')?.cpuUsPerMsg, 1),
  };
}

function memoryKeys(extra: Extra): Keys {
  const m = extra.memory;
  return {
    heapGrowthMb: m ? round((m.end.heapUsed - m.before.heapUsed) / MB, 1) : null,
    heapTotalGrowthMb: m ? round((m.end.heapTotal - m.before.heapTotal) / MB, 1) : null,
    newSpaceGrowthMb: m?.end.newSpace !== undefined && m.before.newSpace !== undefined ? round((m.end.newSpace - m.before.newSpace) / MB, 1) : null,
    rssGrowthAfterWarmupMb: m ? round((m.end.rss - m.warm.rss) / MB, 1) : null,
    youngGenGrowthMb: m ? youngGrowth(m) : null,
    rssGrowthBeyondYoungGenMb: m ? round((m.end.rss - m.before.rss) / MB - (youngGrowth(m) ?? NaN), 1) : null,
    rawRssGrowthMb: extra.rawMemory ? round((extra.rawMemory.end.rss - extra.rawMemory.before.rss) / MB, 1) : null,
    rawYoungGenGrowthMb: extra.rawMemory ? youngGrowth(extra.rawMemory) : null,
    nodeRedOnlyRssGrowthMb: extra.nodeRedMemory ? round((extra.nodeRedMemory.end.rss - extra.nodeRedMemory.before.rss) / MB, 1) : null,
  };
}

function dedupeKeys({ dMem, dRedis, dPg }: Pairs): Keys {
  return {
    dedupeMemoryRatio: r2(dMem?.ratio),
    dedupeRedisRatio: r2(dRedis?.ratio),
    dedupePgRatio: r2(dPg?.ratio),
    // The same pairs as the median of each repetition's own ratio (runs back to back).
    dedupeMemoryPairRatio: r2(dMem?.pairRatio),
    dedupeRedisPairRatio: r2(dRedis?.pairRatio),
    dedupePgPairRatio: r2(dPg?.pairRatio),
    dedupeRedisVsHandWrittenRatio: r2(dRedis?.batchedRatio),
    dedupeRedisHandWrittenRatio: r2(handWritten(dRedis)),
    dedupePgVsHandWrittenRatio: r2(dPg?.batchedRatio),
    dedupePgHandWrittenRatio: r2(handWritten(dPg)),
  };
}

function outboxKeys({ relay, outboxRelay, outboxWrite, relayDeleting }: Pairs, extra: Extra): Keys {
  return {
    outboxRelayRatio: r2(outboxRelay?.ratio),
    outboxRelayMsgPerSec: round(outboxRelay?.pkg.msgPerSec),
    outboxWriteRatio: r2(outboxWrite?.ratio),
    outboxLatencyP50Ms: round(extra.outboxLatency?.p50, 2),
    outboxLatencyP99Ms: round(extra.outboxLatency?.p99, 2),
    // The relay against raw amqplib publishing the same events with confirms (per 100), and commit → consumer p99 at 1 000 events/s from 10 writers.
    outboxRelayVsPublishRatio: r2(relay?.ratio),
    outboxRelayVsPublishPairRatio: r2(relay?.pairRatio),
    outboxRelayVsHandWrittenRatio: r2(relay?.batchedRatio),
    outboxHandWrittenVsPublishRatio: r2(handWritten(relay)),
    outboxRelayDeletingVsPublishRatio: r2(relayDeleting?.ratio),
    outboxLatencyP99At1000Ms: round(extra.outboxLatencyAtRate?.p99, 2),
  };
}

function parkingHistoryKeys(extra: Extra): Keys {
  return {
    // (In smoke mode of PLAN.parkingGroup messages, not 100 000.)
    parkingGroup100kS: round(extra.parkingGroup?.seconds, 2),
    // What grouping takes of the Node-RED process: its peak RSS while grouping above the idle process; and that peak itself.
    parkingGroup100kRssMb: round(extra.parkingGroup ? (extra.parkingGroup.rssPeak - extra.parkingGroup.rssBefore) / MB : undefined, 1),
    parkingGroup100kRssPeakMb: round(extra.parkingGroup ? extra.parkingGroup.rssPeak / MB : undefined, 1),
    // 300 consumers' full 24 h history: the RSS it adds to a process (target ≤ 10 MiB), and the bytes of its rings.
    history300x24hRssMb: round(extra.history ? (extra.history.rssAfter - extra.history.rssBefore) / MB : undefined, 2),
    history300x24hRingsMb: round(extra.history ? extra.history.ringBytes / MB : undefined, 2),
  };
}

function peerKeys(extra: Extra): Keys {
  const peers: Keys = {};
  for (const [i, p] of (extra.peers?.rows ?? []).entries()) {
    peers[`${p.key}MsgPerSec`] = round(p.msgPerSec);
    peers[`${p.key}CpuUsPerMsg`] = round(p.cpuUsPerMsg, 1);
    peers[`${p.key}MainThreadUsPerMsg`] = round(p.mainThreadUsPerMsg, 1);
    peers[`${p.key}WarmUpCpuUsPerMsg`] = round(p.warmUpCpuUsPerMsg, 1);
    if (i > 0) peers[`${p.key}Ratio`] = r2(p.ratio);
    if (p.key !== BATCHED_PEER_KEY) peers[`${p.key}BatchedRatio`] = r2(p.batchedRatio);
  }
  return peers;
}

export function summaryJson(results: Results): Keys {
  const { extra, failures } = results;
  const p = pairsOf(results.rows);
  const m = extra.memory;
  return {
    consumeAckRatio: r2(p.c100?.ratio),
    parkRatio: r2(p.park?.ratio),
    publishConfirmRatio: r2(p.pub?.ratio),
    retryLagP99Ms: round(extra.lag?.pkgFlow.p99, 2),
    rssGrowthMb: m ? round((m.end.rss - m.before.rss) / MB, 1) : null,
    ...consumeKeys(p),
    ...retryKeys(p, extra),
    ...parkPublishKeys(p, results.analysis),
    ...memoryKeys(extra),
    ...dedupeKeys(p),
    ...outboxKeys(p, extra),
    ...parkingHistoryKeys(extra),
    reps: REPS,
    smoke: SMOKE ? 1 : 0,
    ...peerKeys(extra),
    ...scaleJson(results.scale),
    ...partitionsJson(extra.partitions),
    ...batchJson(extra.batch),
    ...degradeJson(results.degrade),
    ...nodeRedAloneJson([
      ['consumeAck', p.c100, 'Batched'],
      ['consumeAck16k', p.c16, 'Batched'],
      ['consumeAckP1', p.c1, 'Batched'],
      ['consumeAckP10', p.c10, 'Batched'],
      ['retryPath', p.retry, 'Batched'],
      ['publish', p.pub, 'Raw'],
    ]),
    failedSections: failures.length,
  };
}
