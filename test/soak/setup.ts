/**
 * What the soak runs on, all of its own: a RabbitMQ node (scripts/rabbitmq-node.sh, `soak-<pid>` on
 * AMQP 5711 / management 15711 / distribution 25711 when free, else free ports — never the fault
 * suite's 5691 or the broker suites' ports), a 3-node cluster for the events stream (the fault suite's,
 * `faults-<pid>-c`, 5695-5697 or the next free base), a Redis master + replica with append-only files
 * fsynced on every write behind Sentinel, a PostgreSQL, the downstream, and two Node-RED processes with
 * the packed package and the soak's flow.
 * The shared services (5672, 5432, 6379) are never touched; everything is removed at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { outboxTableDdl } from '../../src/lib/outbox';
import { parseTableName, PostgresDatabase } from '../../src/lib/postgres';
import { nodeRed4 } from '../e2e/node-red-runtimes';
import { brokerNode, resetBrokerNodes, useOwnNode, waitUntil, type BrokerNode } from '../faults/fault-broker';
import { Pair } from '../faults/two-processes';
import { withChannel } from '../faults/workload';
import { NodeRedProcess, packPackage, userDirWith } from '../helpers/node-red-process';
import { startPrivatePostgres, type PrivateServer } from '../helpers/private-stores';
import { Downstream } from './downstream';
import { memoryProbeArgs } from './rss';
import { startSoakSentinel, type SoakSentinel } from './sentinel';
import { StallProxy } from './stall-proxy';
import { PARTITIONS, soakFlow, soakNames, type SoakNames } from './soak-flow';

export const SOAK_AMQP_PORT = 5711;

export interface Soak {
  broker: BrokerNode;
  /** The events stream's 3-node cluster. */
  cluster: BrokerNode;
  redis: SoakSentinel;
  postgres: PrivateServer;
  db: PostgresDatabase;
  downstream: Downstream;
  /** Between the Node-RED processes and the broker: can hold their connections open but silent. */
  proxy: StallProxy;
  pair: Pair;
  names: SoakNames;
  flow: Record<string, unknown>[];
  dirs: string[];
}

/** The ordered stream's effects, with the time each committed. */
const orderedDdl = (table: string): string =>
  `CREATE TABLE ${table} (seq bigserial PRIMARY KEY, message_id text NOT NULL, key text NOT NULL, n int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`;

async function counts(url: string, queues: string[]): Promise<number[]> {
  return withChannel(url, async (ch) => {
    const out: number[] = [];
    for (const q of queues) out.push((await ch.checkQueue(q)).consumerCount);
    return out;
  });
}

/**
 * Process `n` (1 or 2) is consuming: the work and events queues have `n` consumers, and every partition
 * one (the processes share the partitions, each consuming its share: issue 53).
 */
async function consuming(soak: Pick<Soak, 'broker' | 'cluster' | 'names'>, n: number): Promise<boolean> {
  const { names } = soak;
  const partitions = await counts(soak.broker.url, Array.from({ length: PARTITIONS }, (_, i) => `${names.ordered.mainQueue}.${i}`));
  const work = [...(await counts(soak.broker.url, [names.mainQueue])), ...(await counts(soak.cluster.url, [names.events.mainQueue]))];
  return work.every((c) => c === n) && partitions.every((c) => c >= 1);
}

/** Deploys the flow to each process in turn (both declare the same queues and tables), each consuming before the next. */
async function deployBoth(soak: Omit<Soak, 'flow'>, flow: Record<string, unknown>[]): Promise<void> {
  for (const [i, red] of soak.pair.running.entries()) {
    await red.deploy(flow);
    await waitUntil(() => consuming(soak, i + 1), `Node-RED ${i + 1} consuming the work and events queues${soak.pair.log()}`, 120_000);
  }
}

/** Starts everything, filling `into` as it goes (so a set-up that fails halfway is still torn down). */
export async function setUp(into: Partial<Soak>, log: (line: string) => void): Promise<Soak> {
  const dirs: string[] = [];
  into.dirs = dirs;
  useOwnNode('soak', SOAK_AMQP_PORT);
  const launch = nodeRed4.prepare();
  // The cluster boots while the rest starts (a minute or more on a busy machine).
  const clusterUp = brokerNode('cluster');
  clusterUp.catch(() => undefined);
  const broker = await brokerNode('single');
  log(`broker node on ${broker.url}`);
  const redis = (into.redis = await startSoakSentinel());
  const postgres = (into.postgres = await startPrivatePostgres('soak'));
  const databaseUrl = postgres.url.replace('postgres@', 'postgres:soak@');
  log(`Redis master + replica (AOF, appendfsync always) behind ${redis.url}, PostgreSQL on ${postgres.port}`);
  const db = (into.db = new PostgresDatabase({ connectionString: databaseUrl }));
  const names = soakNames();
  await db.query(orderedDdl(names.ordered.effectsTable));
  const outbox = parseTableName(names.outboxTable);
  if ('problem' in outbox) throw new Error(`outbox table ${names.outboxTable}: ${outbox.problem}`);
  for (const statement of outboxTableDdl(outbox)) await db.query(statement);
  const downstream = (into.downstream = await Downstream.start());
  const proxy = (into.proxy = await StallProxy.start(Number(new URL(broker.url).port)));
  const nodeRedAmqp = `amqp://guest:guest@127.0.0.1:${proxy.port}`;
  const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
  dirs.push(packDir);
  const first = await userDirWith(await packPackage(packDir));
  dirs.push(first, Pair.copyUserDir(first));
  const cluster = (into.cluster = await clusterUp);
  log(`cluster ${cluster.nodeRedUrl}`);
  const env = { AMQP_URL: nodeRedAmqp, CLUSTER_AMQP_URL: cluster.nodeRedUrl, DATABASE_URL: databaseUrl };
  // Each process reports what it retains after a full collection (the memory check): rss.ts.
  const pair = (into.pair = await Pair.start(await launch, [dirs[1]!, dirs[2]!], env, 2, memoryProbeArgs()));
  const flow = soakFlow(names, { redisUrl: redis.url, downstreamUrl: downstream.url });
  const soak = { broker, cluster, redis, postgres, db, downstream, proxy, pair, names, dirs };
  await deployBoth(soak, flow);
  log('both Node-RED processes consume the work queue and every partition');
  return { ...soak, flow };
}

/** Stops and removes everything the soak started; each step on its own, so one failing does not leave the rest. */
export async function tearDown(soak: Partial<Soak>): Promise<void> {
  const steps: Array<() => Promise<unknown>> = [
    async () => soak.pair?.stop(),
    // A process of a pair that failed to start both.
    async () => Promise.all([...NodeRedProcess.running].map((red) => red.stop())),
    async () => soak.downstream?.stop(),
    async () => soak.proxy?.stop(),
    async () => soak.db?.close(),
    async () => soak.redis?.remove(),
    async () => soak.postgres?.remove(),
    () => resetBrokerNodes(),
  ];
  for (const step of steps) await step().catch((err: unknown) => console.error(`soak clean-up: ${(err as Error).message}`));
  for (const dir of soak.dirs ?? []) rmSync(dir, { recursive: true, force: true });
}
