/**
 * Redis beyond one server for the tests, from the installed redis-server on free loopback ports (temp
 * directories, nothing kept on disk, removed afterwards): a Cluster of 3 masters with a replica each,
 * and a master with a replica watched by Sentinel. The shared Redis on 6379 is never touched.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { waitFor } from './broker';
import { freePorts } from './private-node';
import { exited } from './private-stores';

/** A redis-server process of ours on a loopback port. */
export interface RedisProcess {
  port: number;
  child: ChildProcess | undefined;
}

async function answers(port: number): Promise<boolean> {
  const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/** Asks one server (or sentinel) on loopback, then hangs up. */
export async function ask(port: number, ...command: string[]): Promise<unknown> {
  const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => undefined);
  try {
    const [name, ...args] = command;
    return await r.call(name as string, ...args);
  } finally {
    r.disconnect();
  }
}

/** Starts redis-server with `args` and waits until it answers on its port. */
export async function runRedis(p: RedisProcess, args: string[]): Promise<void> {
  p.child = spawn('redis-server', args, { stdio: 'ignore' });
  await waitFor(() => answers(p.port), `private redis on ${p.port}`, 15_000);
}

/** SIGKILLs it (like a crash) and waits until it is gone. */
export async function killRedis(p: RedisProcess): Promise<void> {
  const c = p.child;
  p.child = undefined;
  if (!c) return;
  c.kill('SIGKILL');
  await exited(c);
}

/** Why a test that needs a private Redis Cluster is skipped: redis-cli creates it. */
export const NO_REDIS_CLI = 'needs redis-cli (redis-tools) to create a private Redis Cluster: sudo apt-get install redis-tools';

export function canCreateCluster(): boolean {
  return spawnSync('redis-cli', ['--version']).status === 0;
}

const NOTHING_ON_DISK = ['--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'];

export interface PrivateCluster {
  /** `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3` (the masters at start). */
  url: string;
  ports: number[];
  /** The port of the node that serves a key's slot now (its master). */
  masterOf(key: string): Promise<number>;
  /** Makes the replica of `masterPort` the master (CLUSTER FAILOVER on it), and waits until the cluster says so. */
  failover(masterPort: number): Promise<number>;
  /** Kills the master's process (SIGKILL), and waits until its replica is master and the cluster is ok again. */
  killMaster(masterPort: number): Promise<number>;
  remove(): Promise<void>;
}

/** A Redis Cluster: 3 masters, a replica each (`redis-cli --cluster create … --cluster-replicas 1`). */
export async function startPrivateCluster(): Promise<PrivateCluster> {
  const ports = await freePorts(12);
  const dir = mkdtempSync(path.join(tmpdir(), 'rabbitmq-retry-redis-cluster-'));
  const nodes: RedisProcess[] = ports.slice(0, 6).map((port) => ({ port, child: undefined }));
  const remove = async (): Promise<void> => {
    for (const n of nodes) await killRedis(n);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(
      nodes.map((n, i) =>
        runRedis(n, ['--port', String(n.port), '--cluster-enabled', 'yes', '--cluster-port', String(ports[6 + i]), '--cluster-config-file', path.join(dir, `nodes-${n.port}.conf`), '--cluster-node-timeout', '2000', '--dir', dir, ...NOTHING_ON_DISK]),
      ),
    );
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'], { encoding: 'utf8', timeout: 60_000 });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout} ${create.stderr}`);
    await waitFor(async () => (await Promise.all(nodes.map(async (n) => /cluster_state:ok/.test(String(await ask(n.port, 'CLUSTER', 'INFO')))))).every(Boolean), 'cluster state ok', 30_000);
    await waitFor(async () => (await replicasSynced(nodes)) === 3, 'replicas in sync', 30_000);
  } catch (err) {
    await remove();
    throw err;
  }
  const replicaOf = async (masterPort: number): Promise<number> => {
    const myId = String(await ask(masterPort, 'CLUSTER', 'MYID'));
    const replicas = (await ask(masterPort, 'CLUSTER', 'REPLICAS', myId)) as string[];
    const replicaPort = Number(/127\.0\.0\.1:(\d+)/.exec(replicas[0] ?? '')?.[1]);
    if (!replicaPort) throw new Error(`no replica of ${masterPort}`);
    return replicaPort;
  };
  const slotMaster = async (key: string): Promise<number> => {
    const slot = Number(await ask(nodes[0]!.port, 'CLUSTER', 'KEYSLOT', key));
    const slots = (await ask(nodes[0]!.port, 'CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
    const range = slots.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`no node serves slot ${slot}`);
    return range[2][1];
  };
  return {
    url: `redis+cluster://${nodes
      .slice(0, 3)
      .map((n) => `127.0.0.1:${n.port}`)
      .join(',')}`,
    ports: nodes.map((n) => n.port),
    masterOf: slotMaster,
    failover: async (masterPort) => {
      const replicaPort = await replicaOf(masterPort);
      await ask(replicaPort, 'CLUSTER', 'FAILOVER');
      await waitFor(async () => /role:master/.test(String(await ask(replicaPort, 'INFO', 'replication'))), `replica ${replicaPort} promoted`, 30_000);
      return replicaPort;
    },
    killMaster: async (masterPort) => {
      const replicaPort = await replicaOf(masterPort);
      const victim = nodes.find((n) => n.port === masterPort);
      if (!victim) throw new Error(`${masterPort} is not one of ours`);
      await killRedis(victim);
      await waitFor(async () => /role:master/.test(String(await ask(replicaPort, 'INFO', 'replication'))), `replica ${replicaPort} promoted`, 60_000);
      await waitFor(async () => /cluster_state:ok/.test(String(await ask(replicaPort, 'CLUSTER', 'INFO'))), 'cluster state ok', 60_000);
      return replicaPort;
    },
    remove,
  };
}

async function replicasSynced(nodes: RedisProcess[]): Promise<number> {
  const infos = await Promise.all(nodes.map((n) => ask(n.port, 'INFO', 'replication').then(String)));
  return infos.filter((info) => /role:slave/.test(info) && /master_link_status:up/.test(info)).length;
}

export interface PrivateSentinel {
  /** `redis+sentinel://127.0.0.1:<sentinel>/<name>`. */
  url: string;
  name: string;
  /** The master's port now, as the sentinel says. */
  masterPort(): Promise<number>;
  /** Kills the master's process (SIGKILL, like a crash) and waits until the sentinel has promoted the replica. */
  killMaster(): Promise<number>;
  /**
   * A replica behind: stops it (SIGSTOP) and cuts its link for `lagMs` while the master goes on taking
   * writes, kills the master, lets the replica go on; the sentinel promotes it without the writes it missed.
   */
  killMasterWithLag(lagMs: number): Promise<number>;
  remove(): Promise<void>;
}

/**
 * A master, a replica of it, and one sentinel (quorum 1: enough for a test; production runs three)
 * that promotes the replica 1 s after the master stops answering.
 */
export async function startPrivateSentinel(): Promise<PrivateSentinel> {
  const [masterPort, replicaPort, sentinelPort] = (await freePorts(3)) as [number, number, number];
  const dir = mkdtempSync(path.join(tmpdir(), 'rabbitmq-retry-redis-sentinel-'));
  const name = 'rrmaster';
  const master: RedisProcess = { port: masterPort, child: undefined };
  const replica: RedisProcess = { port: replicaPort, child: undefined };
  const sentinel: RedisProcess = { port: sentinelPort, child: undefined };
  const remove = async (): Promise<void> => {
    for (const p of [sentinel, replica, master]) await killRedis(p);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await runRedis(master, ['--port', String(masterPort), '--dir', dir, ...NOTHING_ON_DISK]);
    await runRedis(replica, ['--port', String(replicaPort), '--dir', dir, '--replicaof', '127.0.0.1', String(masterPort), ...NOTHING_ON_DISK]);
    await waitFor(async () => /master_link_status:up/.test(String(await ask(replicaPort, 'INFO', 'replication'))), 'replica in sync', 30_000);
    const conf = path.join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${sentinelPort}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${masterPort} 1`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 10000`,
        `sentinel parallel-syncs ${name} 1`,
        '',
      ].join('\n'),
    );
    sentinel.child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
    await waitFor(() => answers(sentinelPort), `private sentinel on ${sentinelPort}`, 15_000);
    // The sentinel has found the replica (from the master's INFO) before a failover can promote it.
    await waitFor(async () => ((await ask(sentinelPort, 'SENTINEL', 'REPLICAS', name)) as unknown[]).length === 1, 'sentinel knows the replica', 30_000);
  } catch (err) {
    await remove();
    throw err;
  }
  const current = async (): Promise<number> => Number(((await ask(sentinelPort, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[])[1]);
  /** Does `fail` to the master (and its replica), then waits until the sentinel has promoted the replica. */
  const promote = async (fail: (victim: RedisProcess, survivor: RedisProcess) => Promise<void>): Promise<number> => {
    const was = await current();
    const victim = [master, replica].find((p) => p.port === was);
    const survivor = [master, replica].find((p) => p.port !== was);
    if (!victim || !survivor) throw new Error(`the master ${was} is not one of ours`);
    await fail(victim, survivor);
    await waitFor(async () => (await current()) !== was, 'sentinel promoted the replica', 60_000);
    const now = await current();
    await waitFor(async () => /role:master/.test(String(await ask(now, 'INFO', 'replication'))), `${now} is master`, 30_000);
    return now;
  };
  return {
    url: `redis+sentinel://127.0.0.1:${sentinelPort}/${name}`,
    name,
    masterPort: current,
    killMaster: () => promote(async (victim) => killRedis(victim)),
    killMasterWithLag: (lagMs) =>
      promote(async (victim, survivor) => {
        // Stopped, and cut off by the master: what the master writes from now on stays on the master
        // (what it had sent before is in the replica's socket, read when it goes on).
        survivor.child?.kill('SIGSTOP');
        await ask(victim.port, 'CLIENT', 'KILL', 'TYPE', 'replica');
        await new Promise((resolve) => setTimeout(resolve, lagMs));
        await killRedis(victim);
        survivor.child?.kill('SIGCONT');
      }),
    remove,
  };
}
