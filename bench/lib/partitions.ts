/**
 * The bench's partitions section (issue 42): ordered throughput with a downstream that takes 5 ms a
 * call, one ordered queue against a partitioned configuration of 8 ordered partitions, in the Node-RED
 * runtime: retry-consumer (ordered) → the downstream (bench-call: 5 ms, then on) → retry-settle (ack).
 * The messages are published once the consumers are up (1000 keys, so they spread over the
 * partitions), timed from the first publish to the N-th ack written (the amqplib probe). Alternating, `reps` times each.
 */
import type { ChannelModel } from 'amqplib';
import { partitionOf } from '../../src/lib/topology/partitions';
import type { Names } from '../../test/helpers/flows';
import { consumerNode, tab } from '../../test/helpers/flows';
import { armProbe, median, probeCounts, round, withTimeout, type RunResult } from './common';
import { benchHooks, loadFlow, unloadFlow } from './nodered';
import { keySpreadJson, keySpreadTable, type KeySpread } from './partition-spread';
import { benchBroker, benchConfig, timed, waitForConsumer, type Ctx } from './scenarios';

export const PARTITIONS = 8;
const DOWNSTREAM_MS = 5;

export interface PartitionsResult {
  /** How evenly keys spread over the partitions (partition-spread.ts). */
  spread?: KeySpread;
  one: RunResult[];
  partitioned: RunResult[];
  counts: { one: number; partitioned: number };
}

async function orderedRun(ctx: Ctx, model: ChannelModel, topo: Names, count: number, partitions: number): Promise<RunResult> {
  benchHooks.onInput = (msg, send, done) => {
    setTimeout(() => {
      send(msg);
      done();
    }, DOWNSTREAM_MS);
  };
  await loadFlow([
    tab(),
    benchBroker(ctx),
    benchConfig(topo, partitions > 1 ? { partitions: String(partitions), partitionRouting: 'computed' } : {}),
    consumerNode([['down']], { mode: 'ordered', orderedPause: '1' }),
    { id: 'down', type: 'bench-call', z: 'flow', wires: [['ack']] },
    { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', reason: 'bench', wires: [] },
  ]);
  try {
    const queues = partitions > 1 ? Array.from({ length: partitions }, (_, i) => `${topo.mainQueue}.${i}`) : [topo.mainQueue];
    for (const queue of queues) await waitForConsumer(queue);
    const ch = await model.createConfirmChannel();
    try {
      const all = armProbe(count);
      return await timed(count, async () => {
        const body = Buffer.from(JSON.stringify({ bench: true }));
        for (let i = 0; i < count; i++) {
          const key = `key-${i % 1000}`;
          if (partitions > 1) ch.publish(`${topo.mainQueue}.partitions`, String(partitionOf(key, partitions)), body, { contentType: 'application/json' });
          else ch.sendToQueue(topo.mainQueue, body, { contentType: 'application/json' });
        }
        await ch.waitForConfirms();
        await withTimeout(all, Math.max(60_000, count * 20), `ordered consumer (${partitions} partitions): ${count} acks (got ${probeCounts().acks})`);
      });
    } finally {
      await ch.close().catch(() => undefined);
    }
  } finally {
    benchHooks.onInput = undefined;
    await unloadFlow();
  }
}

export async function runPartitions(o: { ctx: Ctx; model: ChannelModel; one: Names; partitioned: Names; counts: { one: number; partitioned: number }; reps: number; log: (line: string) => void }): Promise<PartitionsResult> {
  const result: PartitionsResult = { one: [], partitioned: [], counts: o.counts };
  try {
    for (let rep = 0; rep < o.reps; rep++) {
      const one = await orderedRun(o.ctx, o.model, o.one, o.counts.one, 1);
      result.one.push(one);
      const partitioned = await orderedRun(o.ctx, o.model, o.partitioned, o.counts.partitioned, PARTITIONS);
      result.partitioned.push(partitioned);
      o.log(`   ordered, ${DOWNSTREAM_MS} ms downstream: one queue ${one.msgPerSec.toFixed(0)} msg/s, ${PARTITIONS} partitions ${partitioned.msgPerSec.toFixed(0)} msg/s (×${(partitioned.msgPerSec / one.msgPerSec).toFixed(2)})`);
    }
  } finally {
    // The run's queues go with the bench's clean-up (its prefix); the partition exchange here.
    const ch = await o.model.createChannel();
    ch.on('error', () => undefined);
    await ch.deleteExchange(`${o.partitioned.mainQueue}.partitions`).catch(() => undefined);
    await ch.close().catch(() => undefined);
  }
  return result;
}

export function partitionsTable(r: PartitionsResult | undefined): string[] {
  if (!r || r.one.length === 0) return keySpreadTable(r?.spread);
  const one = median(r.one.map((x) => x.msgPerSec));
  const many = median(r.partitioned.map((x) => x.msgPerSec));
  return [
    '',
    `ordered throughput with a downstream that takes ${DOWNSTREAM_MS} ms a call (Node-RED runtime: retry-consumer ordered → ${DOWNSTREAM_MS} ms → ack), median of ${r.one.length}:`,
    `  one ordered queue        ${r.counts.one} msgs  ${one.toFixed(0)} msg/s`,
    `  ${PARTITIONS} ordered partitions   ${r.counts.partitioned} msgs  ${many.toFixed(0)} msg/s   ×${(many / one).toFixed(2)} (target ≥ 5)`,
    ...keySpreadTable(r.spread),
  ];
}

export function partitionsJson(r: PartitionsResult | undefined): Record<string, number | null> {
  const one = r && r.one.length > 0 ? median(r.one.map((x) => x.msgPerSec)) : undefined;
  const many = r && r.partitioned.length > 0 ? median(r.partitioned.map((x) => x.msgPerSec)) : undefined;
  return {
    orderedOneQueueMsgPerSec: round(one),
    ordered8PartitionsMsgPerSec: round(many),
    ordered8PartitionsRatio: one !== undefined && many !== undefined ? round(many / one, 3) : null,
    ...keySpreadJson(r?.spread),
  };
}
