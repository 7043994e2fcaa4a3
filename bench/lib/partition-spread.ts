/**
 * The partitions section's key spread (issue 53): how evenly 1 000 keys and 60 keys (`key-0`…, the keys
 * the throughput runs publish) spread over 8 partitions, counted on the real broker — each key
 * published once through a partition exchange bound as the package binds it, each partition's depth
 * read back. The routing `auto` takes for a new partition exchange (computed: a direct exchange, the
 * package's FNV-1a mod N as the routing key); and the consistent-hash exchange too when the broker has
 * the plugin (each partition bound with weight 1, the key as the routing key). Figure: busiest / mean.
 */
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { busiestShare, CONSISTENT_HASH_EXCHANGE, partitionTarget, type PartitionRouting } from '../../src/lib/topology/partitions';
import { management } from '../../test/helpers/broker';
import { round, type NameBook } from './common';

export const SPREAD_PARTITIONS = 8;
export const SPREAD_KEYS = [1000, 60] as const;

/** Busiest / mean per key count, by routing; consistent-hash only where the broker has the plugin. */
export interface KeySpread {
  computed: Record<number, number>;
  consistentHash?: Record<number, number>;
}

async function hasConsistentHash(): Promise<boolean> {
  const answer = await management('GET', 'overview').catch(() => undefined);
  if (!answer?.ok) return false;
  const overview = (await answer.json()) as { exchange_types?: Array<{ name: string }> };
  return (overview.exchange_types ?? []).some((t) => t.name === CONSISTENT_HASH_EXCHANGE);
}

/** Publishes `keys` keys once each through a fresh partition exchange of this routing; each partition's count. */
async function countsOf(ch: ConfirmChannel, names: NameBook, routing: PartitionRouting, keys: number): Promise<number[]> {
  const mainQueue = names.queue(`spread.${routing}.${keys}`);
  const exchange = `${mainQueue}.partitions`;
  const queues = Array.from({ length: SPREAD_PARTITIONS }, (_, i) => names.queue(`spread.${routing}.${keys}.${i}`));
  await ch.assertExchange(exchange, routing === 'consistent-hash' ? CONSISTENT_HASH_EXCHANGE : 'direct', { durable: false, autoDelete: false });
  try {
    for (const [i, queue] of queues.entries()) {
      await ch.assertQueue(queue, { durable: false });
      await ch.purgeQueue(queue);
      await ch.bindQueue(queue, exchange, routing === 'consistent-hash' ? '1' : String(i));
    }
    for (let k = 0; k < keys; k++) {
      const target = partitionTarget({ mainQueue, partitions: SPREAD_PARTITIONS }, routing, `key-${k}`);
      ch.publish(target.exchange, target.routingKey, Buffer.from('{}'), { mandatory: true });
    }
    await ch.waitForConfirms();
    const counts: number[] = [];
    for (const queue of queues) counts.push((await ch.checkQueue(queue)).messageCount);
    return counts;
  } finally {
    for (const queue of queues) await ch.deleteQueue(queue).catch(() => undefined);
    await ch.deleteExchange(exchange).catch(() => undefined);
  }
}

export async function measureKeySpread(model: ChannelModel, names: NameBook, log: (line: string) => void): Promise<KeySpread> {
  const ch = await model.createConfirmChannel();
  try {
    const spread: KeySpread = { computed: {} };
    const routings: PartitionRouting[] = (await hasConsistentHash()) ? ['computed', 'consistent-hash'] : ['computed'];
    for (const routing of routings) {
      const figures: Record<number, number> = {};
      for (const keys of SPREAD_KEYS) figures[keys] = busiestShare(await countsOf(ch, names, routing, keys));
      if (routing === 'computed') spread.computed = figures;
      else spread.consistentHash = figures;
      log(`   key spread, ${routing}, ${SPREAD_PARTITIONS} partitions: busiest / mean ${SPREAD_KEYS.map((k) => `${k} keys ${figures[k]!.toFixed(2)}`).join(', ')}`);
    }
    if (!spread.consistentHash) log(`   key spread, consistent-hash: not measured (the broker has no ${CONSISTENT_HASH_EXCHANGE} exchange type: rabbitmq_consistent_hash_exchange not enabled)`);
    return spread;
  } finally {
    await ch.close().catch(() => undefined);
  }
}

export function keySpreadTable(s: KeySpread | undefined): string[] {
  if (!s) return [];
  const row = (label: string, f: Record<number, number> | undefined): string => `  ${label.padEnd(24)} ${SPREAD_KEYS.map((k) => `${k} keys ${f?.[k] !== undefined ? `${f[k].toFixed(2)}×` : '—'}`).join('   ')}`;
  return ['', `keys spread over ${SPREAD_PARTITIONS} partitions, busiest partition / mean (target ≤ 1.25× for 1000 keys, ≤ 1.6× for 60):`, row('computed (auto)', s.computed), row('consistent-hash exchange', s.consistentHash)];
}

export function keySpreadJson(s: KeySpread | undefined): Record<string, number | null> {
  return {
    partitionKeySpread1000: round(s?.computed[1000], 3),
    partitionKeySpread60: round(s?.computed[60], 3),
    partitionKeySpreadConsistentHash1000: round(s?.consistentHash?.[1000], 3),
    partitionKeySpreadConsistentHash60: round(s?.consistentHash?.[60], 3),
  };
}
