/**
 * What every fault run does around its fault, shared by the one-process suite (faults.test.ts) and the
 * two-process rows (two-processes.test.ts): taking stock of what became of the messages, the effects
 * counted in PostgreSQL, the consumer's error lines, and the clean-up of a run's queues and tables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { GetMessage } from 'amqplib';
import { packPackage, userDirWith, type NodeRedLaunch } from '../helpers/node-red-process';
import { nodeRed4 } from '../e2e/node-red-runtimes';
import type { PostgresDatabase } from '../../src/lib/postgres';
import type { BrokerNode } from './fault-broker';
import type { FaultNames } from './fault-flow';
import { drain, withChannel, type Accounting } from './workload';

/**
 * One look at the run: the processed records and parked copies taken off their queues into
 * `accounting` (and `parked`), the effects read from PostgreSQL. True once every id of `confirmed`
 * was processed or parked.
 */
export async function takeStock(broker: BrokerNode, names: FaultNames, db: PostgresDatabase, accounting: Accounting, confirmed: ReadonlySet<string>, parked: GetMessage[]): Promise<boolean> {
  accounting.addRecords(await drain(broker.url, names.processedQueue));
  const parkedNow = await drain(broker.url, names.parkingQueue);
  parked.push(...parkedNow);
  accounting.addParked(parkedNow);
  accounting.addEffects((await db.query<{ message_id: string }>(`SELECT DISTINCT message_id FROM ${names.effectsTable}`)).rows.map((r) => r.message_id));
  return accounting.missing(confirmed).length === 0;
}

/** Effect rows beyond the first of an id: what a duplicate costs a user. */
export async function duplicateEffects(db: PostgresDatabase, names: FaultNames): Promise<number> {
  const effects = (await db.query<{ n: number; distinct: number }>(`SELECT count(*)::int AS n, count(DISTINCT message_id)::int AS distinct FROM ${names.effectsTable}`)).rows[0];
  return (effects?.n ?? 0) - (effects?.distinct ?? 0);
}

/**
 * The `[error]` lines of the retry consumer. A row that stops the deduplication store on purpose
 * (`storeRow`) expects the consumer to say so as an error (red, naming the store): those are left out.
 */
export function consumerErrors(lines: string[], storeRow: boolean): string[] {
  return lines.filter((line) => line.includes('[error] [retry-consumer:')).filter((line) => !(storeRow && /deduplication store|deduplication table/.test(line)));
}

/** Deletes the run's queues (and `extraQueues`), its exchange and its tables. */
export async function cleanUp(broker: BrokerNode, names: FaultNames, db: PostgresDatabase, extraQueues: string[] = []): Promise<void> {
  await withChannel(broker.url, async (ch) => {
    for (const q of [names.mainQueue, names.retryQueue, names.parkingQueue, names.processedQueue, ...extraQueues]) await ch.deleteQueue(q).catch(() => undefined);
    await ch.deleteExchange(names.exchange).catch(() => undefined);
  }).catch(() => undefined);
  await db.query(`DROP TABLE IF EXISTS ${names.effectsTable}, ${names.effectsTable}_outbox, ${names.dedupeTable}, ${names.outboxTable}`).catch(() => undefined);
  await db.close();
}

/** The packed package (`npm pack` of dist/) installed into a fresh Node-RED user directory; `remove` deletes both. */
export async function packedUserDir(): Promise<{ userDir: string; remove: () => void }> {
  const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
  const dirs = [packDir];
  const remove = (): void => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const userDir = await userDirWith(await packPackage(packDir));
    dirs.push(userDir);
    return { userDir, remove };
  } catch (err) {
    remove();
    throw err;
  }
}

/** A suite's Node-RED: the runtime prepared, the packed package in a fresh user directory before the suite, removed after it. */
export function packedNodeRed(): { launch: Promise<NodeRedLaunch>; userDir: () => string } {
  const launch = nodeRed4.prepare();
  let packed: { userDir: string; remove: () => void } | undefined;
  before(async function () {
    packed = await packedUserDir();
  });
  after(function () {
    packed?.remove();
  });
  return { launch, userDir: () => packed?.userDir ?? '' };
}
