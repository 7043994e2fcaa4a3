/**
 * The fault suite's partitioned row (issues 42 and 53, `npm run test:faults`): the packed package in
 * three real Node-RED processes with the same flow on one partitioned configuration (8 partitions),
 * 1000 keys × 10 messages each published in order per key over about a minute, a downstream that takes
 * 5 ms a call, deduplication by messageId in PostgreSQL (the key recorded in the effect's transaction).
 * Two processes start; while the messages flow the third joins, the first is SIGKILLed, then restarted,
 * and the second stops gracefully (SIGTERM).
 *
 * Asserted: lost 0, per key the effects happened in publish order, duplicate effects 0, and 10 s after
 * each change every live process holds its fair share ±1 (8 / live processes, from its status
 * `active on N of 8 partitions`); the share timeline is printed with the row. Counts:
 * FAULTS_PARTITION_KEYS (1000), FAULTS_PARTITION_MESSAGES (10 per key); FAULTS_PARTITION_WAIT_S (300)
 * for the rest after the last change. Needs `npm run build` first and an installed rabbitmq-server.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as amqp from 'amqplib';
import { partitionOf } from '../../src/lib/topology/partitions';
import { PostgresDatabase } from '../../src/lib/postgres';
import { nodeRed4 } from '../e2e/node-red-runtimes';
import { packPackage, userDirWith, type NodeRedLaunch } from '../helpers/node-red-process';
import { DATABASE_URL } from '../helpers/private-stores';
import { brokerNode, pause, resetBrokerNodes, waitUntil, type BrokerNode } from './fault-broker';
import { effectsDdl, partitionFlow, partitionNames, type PartitionNames } from './partition-flow';
import { Pair } from './two-processes';
import { ShareTimeline } from './share-timeline';
import { withChannel } from './workload';

const PARTITIONS = 8;
const KEYS = Number(process.env.FAULTS_PARTITION_KEYS ?? 1000);
const PER_KEY = Number(process.env.FAULTS_PARTITION_MESSAGES ?? 10);
const DOWNSTREAM_MS = 5;
/** Every round of PER_KEY messages (one per key) this long after the last: the run outlasts the changes. */
const ROUND_MS = 7_000;
/** How long the last processes may take to process the rest (FAULTS_PARTITION_WAIT_S). */
const WAIT_MS = Number(process.env.FAULTS_PARTITION_WAIT_S ?? 300) * 1000;

/** Every message, in order per key (n outer, so the keys interleave as they would in production), each confirmed; a round every ROUND_MS. */
async function publishAll(url: string, names: PartitionNames): Promise<number> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createConfirmChannel();
    let sent = 0;
    for (let n = 1; n <= PER_KEY; n++) {
      for (let k = 0; k < KEYS; k++) {
        const key = `account-${k}`;
        // The routing key the package computes (another producer computes the same: docs/scaling.md).
        channel.publish(`${names.mainQueue}.partitions`, String(partitionOf(key, PARTITIONS)), Buffer.from(JSON.stringify({ key, n })), {
          persistent: true,
          messageId: `${key}/${n}`,
          contentType: 'application/json',
          mandatory: true,
        });
        sent += 1;
      }
      await channel.waitForConfirms();
      if (n < PER_KEY) await pause(ROUND_MS);
    }
    return sent;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

interface Effects {
  total: number;
  distinct: number;
  /** Keys whose effects are not 1, 2, … in the order they committed (each message's first effect). */
  outOfOrder: string[];
}

async function effects(db: PostgresDatabase, names: PartitionNames): Promise<Effects> {
  const rows = (await db.query<{ key: string; n: number }>(`SELECT key, n FROM ${names.effectsTable} ORDER BY seq`)).rows;
  const seen = new Map<string, number[]>();
  for (const { key, n } of rows) seen.set(key, [...(seen.get(key) ?? []), n]);
  const outOfOrder = [...seen].filter(([, ns]) => ns.some((n, i) => i > 0 && n < ns[i - 1]!)).map(([key, ns]) => `${key}: ${ns.join(',')}`);
  const distinct = new Set(rows.map((r) => `${r.key}/${r.n}`)).size;
  return { total: rows.length, distinct, outOfOrder };
}

async function depth(broker: BrokerNode, names: PartitionNames): Promise<number> {
  const queues = Array.from({ length: PARTITIONS }, (_, i) => `${names.mainQueue}.${i}`);
  const out = await broker.ctl('list_queues', '--quiet', '--no-table-headers', 'name', 'messages');
  return out
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([name]) => name !== undefined && queues.includes(name))
    .reduce((sum, [, messages]) => sum + Number(messages), 0);
}

describe('fault suite: partitioned ordered mode, three Node-RED processes sharing the partitions', function () {
  this.timeout(900_000);
  let packDir = '';
  const userDirs: string[] = [];
  const launch: Promise<NodeRedLaunch> = nodeRed4.prepare();

  before(async function () {
    packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    const first = await userDirWith(await packPackage(packDir));
    userDirs.push(first, Pair.copyUserDir(first), Pair.copyUserDir(first));
  });

  after(async function () {
    for (const dir of [packDir, ...userDirs]) if (dir) rmSync(dir, { recursive: true, force: true });
    await resetBrokerNodes();
  });

  it(`${PARTITIONS} partitions, ${KEYS} keys × ${PER_KEY}, ${DOWNSTREAM_MS} ms downstream: one joins, one SIGKILLed, restarted, one stops — lost 0, order per key kept, duplicate effects 0, each within ±1 of its fair share 10 s after each change`, async function () {
    const broker = await brokerNode('single');
    const names = partitionNames('partitions');
    const db = new PostgresDatabase({ connectionString: DATABASE_URL });
    await db.query(effectsDdl(names));
    let pair: Pair | undefined;
    let timeline: ShareTimeline | undefined;
    try {
      pair = await Pair.start(await launch, userDirs, { AMQP_URL: broker.nodeRedUrl, DATABASE_URL }, 2);
      const running = pair;
      const flow = partitionFlow(names, { partitions: PARTITIONS, downstreamMs: DOWNSTREAM_MS, leaseSeconds: 5 });
      await Promise.all(pair.running.map((red) => red.deploy(flow)));
      timeline = new ShareTimeline(PARTITIONS, (i) => running.processes[i]?.lines());
      const shares = timeline;
      await waitUntil(() => Promise.resolve(shares.even([0, 1])), `two processes on 4 partitions each${running.log()}`);
      const publishing = publishAll(broker.url, names);
      await pause(ROUND_MS);
      // The changes, each looked at SETTLE_MS later: which processes are live then, and what each holds.
      await timeline.change('Node-RED 3 joins', [0, 1, 2], async () => {
        await running.restart(2);
        await running.processes[2]!.deploy(flow);
      });
      await timeline.change('Node-RED 1 SIGKILLed', [1, 2], () => running.kill(0));
      await timeline.change('Node-RED 1 restarted', [0, 1, 2], () => running.restart(0));
      await timeline.change('Node-RED 2 stops (SIGTERM)', [0, 2], () => running.stopOne(1));
      const total = await publishing;
      const lastChange = Date.now();
      // Generous: a run that does not finish is a broken run, never a slow one (a loaded machine drains slower).
      await waitUntil(async () => (await effects(db, names)).distinct === total && (await depth(broker, names)) === 0, `every effect${running.log()}`, WAIT_MS).catch(() => undefined);
      const drainS = (Date.now() - lastChange) / 1000;
      timeline.stop();

      const result = await effects(db, names);
      const left = await depth(broker, names);
      const lost = total - result.distinct - left;
      console.log(
        `\n| partitioned row | messages ${total} | effects ${result.total} | distinct ${result.distinct} | LOST ${lost} | left in partitions ${left} | duplicate effects ${result.total - result.distinct} | keys out of order ${result.outOfOrder.length} | share 10 s after each change ${timeline.verdicts()} | after the last change (s) ${drainS.toFixed(1)} |\n\nshare timeline (partitions held per Node-RED process):\n${timeline.text()}\n`,
      );
      assert.equal(lost, 0, `${lost} message(s) LOST${pair.log()}`);
      assert.equal(left, 0, `${left} message(s) still in the partitions after ${WAIT_MS / 1000} s${pair.log()}`);
      assert.deepEqual(result.outOfOrder.slice(0, 10), [], 'per key the effects happened in publish order');
      assert.equal(result.total - result.distinct, 0, 'no effect repeated');
      assert.deepEqual(timeline.misses(), [], 'each live process within ±1 of its fair share 10 s after each change');
      assert.deepEqual(pair.lines().filter((line) => line.includes('[error] [retry-consumer:')), [], 'the consumers logged no error');
    } finally {
      timeline?.stop();
      await pair?.stop();
      await withChannel(broker.url, async (ch) => {
        for (let i = 0; i < PARTITIONS; i++) {
          await ch.deleteQueue(`${names.mainQueue}.${i}`).catch(() => undefined);
          await ch.deleteQueue(`${names.retryQueue}.${i}`).catch(() => undefined);
        }
        await ch.deleteQueue(names.parkingQueue).catch(() => undefined);
        await ch.deleteExchange(`${names.mainQueue}.partitions`).catch(() => undefined);
      }).catch(() => undefined);
      await db.query(`DROP TABLE IF EXISTS ${names.effectsTable}, ${names.effectsTable}_outbox, ${names.dedupeTable}`).catch(() => undefined);
      await db.close();
    }
  });
});
