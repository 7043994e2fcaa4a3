/**
 * The soak's load and its drain: three streams at a steady pace — direct publishes (half the rate),
 * outbox events (a fifth; the relay publishes them to the cluster) and the ordered stream (the rest,
 * 100 keys) — while the schedule runs; then
 * the drain, which waits until every confirmed message was effected or parked and the queues are empty.
 */
import { pause, type BrokerNode } from '../faults/fault-broker';
import { OutboxProducer } from '../faults/outbox-producer';
import { drain, Producer } from '../faults/workload';
import { OrderedProducer } from './ordered-producer';
import { drainDone, type Observations } from './reconcile';
import type { Soak } from './setup';
import { PARTITIONS } from './soak-flow';

const KEYS = 100;
const PARK_REASON = 'park-reason';
const PARK_TIME = 'park-time';

const text = (value: unknown): string => (typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : '');

export interface Load {
  work: Producer;
  outbox: OutboxProducer;
  ordered: OrderedProducer;
}

export function startLoad(soak: Soak, rate: number): Load {
  const { broker, names, db } = soak;
  const load: Load = {
    work: new Producer(broker.urls, names.exchange, names.routingKey, 'w', () => false),
    outbox: new OutboxProducer(db, names.outboxTable, names.events.exchange, names.events.routingKey, 'o', () => false),
    ordered: new OrderedProducer(broker.urls, `${names.ordered.mainQueue}.partitions`, 'k', KEYS, PARTITIONS),
  };
  load.work.start(rate * 0.5);
  load.outbox.start(rate * 0.2);
  load.ordered.start(rate * 0.3);
  return load;
}

export async function stopLoad(load: Load): Promise<void> {
  await Promise.all([load.work.stop(), load.outbox.stop(), load.ordered.stop()]);
}

/** Messages in the soak's queues but the parking queues, ready or unacked (rabbitmqctl: the management API's counts lag). */
async function leftInQueues(broker: BrokerNode, soak: Soak): Promise<number> {
  const out = await broker.ctl('list_queues', '--quiet', '--no-table-headers', 'name', 'messages');
  const parking = [soak.names.parkingQueue, soak.names.ordered.parkingQueue, soak.names.events.parkingQueue];
  const ours = (name: string): boolean =>
    (name.startsWith(soak.names.mainQueue.replace(/\.main$/, '')) || name.startsWith(soak.names.ordered.mainQueue.replace(/\.main$/, ''))) && !parking.includes(name);
  let total = 0;
  for (const line of out.split('\n')) {
    const [name, messages] = line.trim().split(/\s+/);
    if (name && ours(name)) total += Number(messages);
  }
  return total;
}

/** What the soak knows now; the parked copies are taken off the parking queues into `parked`. */
export async function observe(soak: Soak, load: Load, parked: Array<{ id: string; reason: string; at?: number }>): Promise<Omit<Observations, 'faults' | 'rssGrowthMiB' | 'retainedGrowthMiB' | 'statuses' | 'circuitTrips'>> {
  const parkingQueues: Array<[string, string]> = [
    [soak.broker.url, soak.names.parkingQueue],
    [soak.broker.url, soak.names.ordered.parkingQueue],
    [soak.cluster.url, soak.names.events.parkingQueue],
  ];
  for (const [url, queue] of parkingQueues) {
    for (const m of await drain(url, queue)) {
      const headers = (m.properties.headers ?? {}) as Record<string, unknown>;
      const at = Date.parse(text(headers[PARK_TIME]));
      parked.push({ id: String(m.properties.messageId), reason: text(headers[PARK_REASON]), ...(Number.isFinite(at) ? { at } : {}) });
    }
  }
  const rows = (
    await soak.db.query<{ message_id: string; key: string; n: number; at: string }>(
      `SELECT message_id, key, n, (extract(epoch FROM at) * 1000)::float8::text AS at FROM ${soak.names.ordered.effectsTable} ORDER BY seq`,
    )
  ).rows;
  return {
    confirmed: new Set([...load.work.confirmed, ...load.outbox.confirmed]),
    effects: soak.downstream.effects,
    parked,
    rolledBack: load.outbox.rolledBack,
    orderedConfirmed: load.ordered.confirmed,
    orderedEffects: rows.map((r) => ({ id: r.message_id, key: r.key, n: r.n, at: Number(r.at) })),
    left: (await leftInQueues(soak.broker, soak)) + (await leftInQueues(soak.cluster, soak)),
  };
}

/**
 * Waits (looking every 5 s, at most `limitMs`) until the drain is done (`drainDone`: every confirmed id
 * effected or parked, the queues empty, every consumer consuming — `notConsuming` lists the ones that
 * are not); what it saw last.
 */
export async function drainAll(soak: Soak, load: Load, limitMs: number, notConsuming: () => readonly string[]): Promise<Omit<Observations, 'faults' | 'rssGrowthMiB' | 'retainedGrowthMiB' | 'statuses' | 'circuitTrips'>> {
  const parked: Array<{ id: string; reason: string; at?: number }> = [];
  const deadline = Date.now() + limitMs;
  for (;;) {
    const seen = await observe(soak, load, parked).catch(() => undefined);
    if (seen) {
      if (drainDone(seen, notConsuming()) || Date.now() > deadline) return seen;
    } else if (Date.now() > deadline) {
      throw new Error('the soak could not look at its queues and tables at the end of the drain');
    }
    await pause(5_000);
  }
}
