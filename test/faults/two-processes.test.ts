/**
 * The fault suite's two-process rows (issue 28, `npm run test:faults`): the packed package in two real
 * Node-RED processes consuming one queue, deduplicating by messageId in one Redis of the run's own,
 * every message published twice (the second copy 0–3 s after the first) — or, in the outbox row,
 * written once into an outbox table two relays (one per process) publish from. The effect is a row per
 * processing in PostgreSQL (no unique constraint), so a repeated effect shows.
 *
 * Asserted: lost 0 in every row, duplicate effects 0 in every row but the Redis restarted with
 * nothing on disk (reported), no event of a rolled-back outbox write processed, and in the row that
 * leaves 5 % of the first deliveries unsettled: every copy settled within the settle timeout + 7 s of
 * the end of publishing (a recovery bound: a claim is released when the settle timeout ends its
 * delivery, and held copies are looked at again early). The drain is reported for every row.
 *
 * Needs `npm run build` first (the tarball packs dist/), an installed rabbitmq-server and redis-server.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { GetMessage } from 'amqplib';
import { packPackage, userDirWith, type NodeRedLaunch } from '../helpers/node-red-process';
import { nodeRed4 } from '../e2e/node-red-runtimes';
import { canStartPrivateRedis, DATABASE_URL, NO_PRIVATE_REDIS, startPrivateRedis } from '../helpers/private-stores';
import { skipBecause } from '../helpers/skips';
import { outboxTableDdl } from '../../src/lib/outbox';
import { parseTableName, PostgresDatabase } from '../../src/lib/postgres';
import { brokerNode, resetBrokerNodes, waitUntil, type BrokerNode } from './fault-broker';
import { faultFlow, faultNames, healthy, latestStatuses, type FaultNames } from './fault-flow';
import { cleanUp, consumerErrors, duplicateEffects, takeStock } from './run-parts';
import { Pair, PAIR_ROWS, type PairRow } from './two-processes';
import { Accounting, drain, Producer, withChannel } from './workload';
import { OutboxProducer } from './outbox-producer';

/** Ids per row, started at RATE a second (10 s of publishing). */
const IDS = 1_000;
const RATE = 100;
/** The second copy of a message follows the first within this. */
const SECOND_COPY_MS = 3_000;
const TABLE_FILE = process.env.FAULTS_PAIR_TABLE ?? path.resolve(__dirname, '../../faults-two-processes-table.md');
const LOG_DIR = path.join(os.tmpdir(), 'rabbitmq-retry-faults');

interface Row {
  fault: string;
  ids: number;
  /** Copies that reached the exchange (a queue of the test bound beside the main queue). */
  copies: number;
  /** Copies beyond those the test meant (two per id; one per event through the outbox). */
  duplicatePublishes: number;
  processed: number;
  duplicateEffects: number;
  lost: number;
  left: number;
  /** From the end of publishing until every id was processed and the main and retry queues were empty; undefined: not within the wait. */
  drain: number | undefined;
}

function table(rows: Row[]): string {
  const head = '| fault | ids | copies published | duplicate publishes | processed (distinct) | duplicate effects | LOST | left in queues | drain (s) |';
  const lines = rows.map(
    (r) => `| ${r.fault} | ${r.ids} | ${r.copies} | ${r.duplicatePublishes} | ${r.processed} | ${r.duplicateEffects} | **${r.lost}** | ${r.left} | ${r.drain === undefined ? '> 120' : r.drain.toFixed(1)} |`,
  );
  return [head, '|---|---:|---:|---:|---:|---:|---:|---:|---:|', ...lines].join('\n');
}

/** Messages in a queue, ready or delivered and not yet settled (rabbitmqctl: the management API's counts lag by seconds). */
async function queueDepths(broker: BrokerNode, queues: string[]): Promise<number> {
  const out = await broker.ctl('list_queues', '--quiet', '--no-table-headers', 'name', 'messages');
  let total = 0;
  for (const line of out.split('\n')) {
    const [name, messages] = line.trim().split(/\s+/);
    if (name && queues.includes(name)) total += Number(messages);
  }
  return total;
}

describe('fault suite: two Node-RED processes, one queue, one Redis, every message twice', function () {
  this.timeout(180_000);
  const rows: Row[] = [];
  let packDir = '';
  const userDirs: string[] = [];
  const launch: Promise<NodeRedLaunch> = nodeRed4.prepare();

  before(async function () {
    if (!canStartPrivateRedis()) return;
    packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    const first = await userDirWith(await packPackage(packDir));
    userDirs.push(first, Pair.copyUserDir(first));
  });

  after(async function () {
    if (rows.length > 0) {
      const text = table(rows);
      console.log(`\n${text}\n`);
      writeFileSync(TABLE_FILE, `${text}\n`);
    }
    for (const dir of [packDir, ...userDirs]) if (dir) rmSync(dir, { recursive: true, force: true });
    await resetBrokerNodes();
  });

  for (const fault of PAIR_ROWS) {
    it(fault.name, async function () {
      if (!canStartPrivateRedis()) skipBecause(this, NO_PRIVATE_REDIS);
      const { row, lost, stuck, statuses, errors, rolledBackSeen, log } = await runPair(fault, await launch, userDirs as [string, string]);
      rows.push(row);
      assert.equal(row.lost, 0, `${row.lost} confirmed message(s) LOST after ${fault.name}: ${lost.slice(0, 20).join(', ')}${log}`);
      assert.equal(stuck.length, 0, `${stuck.length} message(s) never processed after ${fault.name}: ${stuck.slice(0, 20).join(', ')}${log}`);
      if (fault.once) assert.equal(row.duplicateEffects, 0, `${row.duplicateEffects} effect(s) repeated after ${fault.name}${log}`);
      assert.deepEqual(rolledBackSeen, [], `events of rolled-back writes were processed after ${fault.name}${log}`);
      if (fault.drainMarginS !== undefined) {
        const bound = fault.settleTimeout + fault.drainMarginS;
        assert.ok(row.drain !== undefined && row.drain < bound, `the copies drained ${row.drain?.toFixed(1) ?? 'never'} s after publishing ended, beyond the settle timeout ${fault.settleTimeout} s + ${fault.drainMarginS} s${log}`);
      }
      assert.equal(statuses, undefined, `a status stuck after ${fault.name}: ${statuses ?? ''}${log}`);
      assert.deepEqual(errors, [], `the consumer logged errors during ${fault.name}${log}`);
    });
  }
});

interface PairResult {
  row: Row;
  lost: string[];
  stuck: string[];
  statuses: string | undefined;
  errors: string[];
  rolledBackSeen: string[];
  log: string;
}

async function runPair(fault: PairRow, launch: NodeRedLaunch, userDirs: [string, string]): Promise<PairResult> {
  const broker = await brokerNode('single');
  const names = faultNames(fault.id);
  const tap = `${names.mainQueue}.tap`;
  const redis = await startPrivateRedis(undefined, fault.aof ? { aof: true, fsync: 'always' } : {});
  const flow = faultFlow(names, {
    dedupe: true,
    redis: fault.postgresStore ? undefined : redis.url,
    outbox: fault.outbox,
    recordFirst: true,
    leaseSeconds: fault.leaseSeconds,
    settleTimeout: fault.settleTimeout,
    dropFirst: fault.dropFirst,
    prefetch: fault.prefetch,
    slowMs: fault.slowMs,
  });
  await withChannel(broker.url, (ch) => ch.assertQueue(names.processedQueue, { durable: true }));
  const db = new PostgresDatabase({ connectionString: DATABASE_URL });
  await db.query(`CREATE TABLE ${names.effectsTable} (message_id text NOT NULL, at timestamptz NOT NULL DEFAULT now())`);
  const outboxTable = parseTableName(names.outboxTable);
  if (fault.outbox && !('problem' in outboxTable)) for (const statement of outboxTableDdl(outboxTable)) await db.query(statement);
  let pair: Pair | undefined;
  try {
    pair = await Pair.start(launch, userDirs, { AMQP_URL: broker.nodeRedUrl, DATABASE_URL });
    const consumers = async (): Promise<number | undefined> => (await withChannel(broker.url, (ch) => ch.checkQueue(names.mainQueue)).catch(() => undefined))?.consumerCount;
    // One after the other: both declare the same tables and queues.
    for (const [i, red] of pair.running.entries()) {
      await red.deploy(flow);
      await waitUntil(async () => (await consumers()) === i + 1, `consumer ${i + 1} on ${names.mainQueue}${pair.log()}`);
    }
    await withChannel(broker.url, async (ch) => {
      await ch.assertQueue(tap, { durable: true });
      await ch.bindQueue(tap, names.exchange, names.routingKey);
    });
    const producer = fault.outbox
      ? new OutboxProducer(db, names.outboxTable, names.exchange, names.routingKey, fault.id, () => false)
      : new Producer(broker.urls, names.exchange, names.routingKey, fault.id, () => false, SECOND_COPY_MS);
    const accounting = new Accounting();
    const parked: GetMessage[] = [];
    producer.start(RATE, IDS);
    await waitUntil(async () => (await takeStock(broker, names, db, accounting, producer.confirmed, parked), accounting.processed.size >= 50), `the flow to process its first messages${pair.log()}`);
    const running = pair;
    await fault.inject({ broker, redis, kill: (i) => running.kill(i), restart: (i) => running.restart(i) });
    await waitUntil(() => Promise.resolve(producer.started >= IDS), 'the producer to start every id', 120_000);
    await producer.stop();
    const publishingEnded = Date.now();

    let drainS: number | undefined;
    await waitUntil(
      async () => {
        await takeStock(broker, names, db, accounting, producer.confirmed, parked);
        if (accounting.missingEffects(producer.confirmed).length > 0) return false;
        return (await queueDepths(broker, [names.mainQueue, names.retryQueue])) === 0;
      },
      'every id processed and every copy settled',
      120_000,
    ).then(
      () => (drainS = (Date.now() - publishingEnded) / 1000),
      () => undefined,
    );
    let statuses: string | undefined;
    await waitUntil(() => Promise.resolve(running.running.every((red) => healthy(latestStatuses(red.lines())))), 'consuming and connected statuses', 30_000).catch(() => {
      statuses = JSON.stringify(running.running.map((red) => [...latestStatuses(red.lines()).values()]));
    });
    await pair.stop(); // unsettled deliveries go back to their queue
    const left = [...(await drain(broker.url, names.mainQueue)), ...(await drain(broker.url, names.retryQueue))];
    const leftIds = new Set(left.map((m) => String(m.properties.messageId)));
    const stuck = accounting.missingEffects(producer.confirmed);
    const lost = stuck.filter((id) => !leftIds.has(id));
    const copies = (await drain(broker.url, tap)).length;
    const meant = producer.confirmed.size * (fault.outbox ? 1 : 2);
    const rolledBack = producer instanceof OutboxProducer ? [...producer.rolledBack] : [];
    return {
      row: {
        fault: fault.name,
        ids: producer.confirmed.size,
        copies,
        duplicatePublishes: copies - meant,
        processed: accounting.processedCount,
        duplicateEffects: await duplicateEffects(db, names),
        lost: lost.length,
        left: left.length,
        drain: drainS,
      },
      lost,
      stuck,
      statuses,
      errors: consumerErrors(pair.lines(), fault.storeRow === true),
      rolledBackSeen: rolledBack.filter((id) => accounting.processed.has(id) || accounting.effected.has(id) || accounting.parked.has(id)),
      log: pair.log(),
    };
  } finally {
    await pair?.stop();
    if (pair) writeLogs(fault, pair, names);
    await cleanUp(broker, names, db, [tap]);
    await redis.remove();
  }
}

function writeLogs(fault: PairRow, pair: Pair, names: FaultNames): void {
  mkdirSync(LOG_DIR, { recursive: true });
  for (const i of [0, 1]) writeFileSync(path.join(LOG_DIR, `${fault.id}-${i + 1}.log`), `${names.mainQueue}\n${pair.output(i)}`);
}
