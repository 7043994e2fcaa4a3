/**
 * The soak's Redis (issue 54): a master and a replica, each with an append-only file fsynced on every
 * write, watched by one Sentinel — the work stream deduplicates through it (`redis+sentinel://`). Two
 * faults: the master killed (SIGKILL) and started again on its file within Sentinel's down-after time
 * (a restart, no failover), and `SENTINEL FAILOVER` (the replica promoted, the old master made its
 * replica). From the installed redis-server on free loopback ports; removed at the end.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pause, waitUntil } from '../faults/fault-broker';
import { freePorts } from '../helpers/private-node';
import { ask, killRedis, runRedis, type RedisProcess } from '../helpers/private-redis-topologies';

/** Sentinel fails a master over only after this long without an answer: longer than any restart the schedule draws (10 s). */
export const DOWN_AFTER_MS = 30_000;
const NAME = 'soakmaster';

export interface SoakSentinel {
  /** `redis+sentinel://127.0.0.1:<sentinel>/<name>`. */
  url: string;
  /** Kills the master now (SIGKILL), waits `ms`, starts it again on its append-only file; resolves once it is master with its replica in sync. */
  restartMaster(ms: number): Promise<void>;
  /** `SENTINEL FAILOVER`; resolves once the replica is master and the old master its replica, in sync. */
  failover(): Promise<void>;
  remove(): Promise<void>;
}

interface Server extends RedisProcess {
  dir: string;
}

const answers = async (port: number): Promise<boolean> => (await ask(port, 'PING').catch(() => undefined)) === 'PONG';

const replication = async (port: number): Promise<string> => String(await ask(port, 'INFO', 'replication'));

export async function startSoakSentinel(): Promise<SoakSentinel> {
  const [a, b, s] = (await freePorts(3)) as [number, number, number];
  const root = mkdtempSync(path.join(os.tmpdir(), 'rabbitmq-retry-soak-redis-'));
  const servers: Server[] = [a, b].map((port) => ({ port, dir: path.join(root, String(port)), child: undefined }));
  const sentinel: Server = { port: s, dir: root, child: undefined };
  for (const server of servers) mkdirSync(server.dir);
  const args = (server: Server, replicaOf?: number): string[] => [
    ...['--port', String(server.port), '--bind', '127.0.0.1', '--dir', server.dir, '--save', ''],
    ...['--appendonly', 'yes', '--appendfsync', 'always'],
    ...(replicaOf === undefined ? [] : ['--replicaof', '127.0.0.1', String(replicaOf)]),
  ];
  const remove = async (): Promise<void> => {
    for (const server of [sentinel, ...servers]) await killRedis(server);
    rmSync(root, { recursive: true, force: true });
  };
  const master = async (): Promise<number> => Number(((await ask(s, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)) as string[])[1]);
  /** The master `port` says it is master, and the other server replicates it with the link up. */
  const settled = async (port: number): Promise<void> => {
    const other = servers.find((x) => x.port !== port)!;
    await waitUntil(async () => /role:master/.test(await replication(port)), `${port} master`, 60_000);
    await waitUntil(async () => new RegExp(`master_port:${port}[\\s\\S]*master_link_status:up`).test(await replication(other.port)), `${other.port} replicating ${port}`, 60_000);
  };
  try {
    await runRedis(servers[0]!, args(servers[0]!));
    await runRedis(servers[1]!, args(servers[1]!, a));
    await settled(a);
    const conf = path.join(root, 'sentinel.conf');
    const lines = [`port ${s}`, 'bind 127.0.0.1', `dir ${root}`, `sentinel monitor ${NAME} 127.0.0.1 ${a} 1`, `sentinel down-after-milliseconds ${NAME} ${DOWN_AFTER_MS}`, `sentinel failover-timeout ${NAME} 20000`];
    writeFileSync(conf, `${lines.join('\n')}\n`);
    sentinel.child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
    await waitUntil(() => answers(s), `private sentinel on ${s}`, 30_000);
    await waitUntil(async () => ((await ask(s, 'SENTINEL', 'REPLICAS', NAME)) as unknown[]).length === 1, 'sentinel knows the replica', 60_000);
  } catch (err) {
    await remove();
    throw err;
  }
  return {
    url: `redis+sentinel://127.0.0.1:${s}/${NAME}`,
    restartMaster: async (ms) => {
      const port = await master();
      const server = servers.find((x) => x.port === port)!;
      await killRedis(server);
      await pause(ms);
      // Its replica-of setting came from Sentinel at the last failover (CONFIG REWRITE is not used): started as a master, as it was.
      await runRedis(server, args(server));
      await settled(port);
    },
    failover: async () => {
      const was = await master();
      await ask(s, 'SENTINEL', 'FAILOVER', NAME);
      await waitUntil(async () => (await master()) !== was, 'sentinel promoted the replica', 60_000);
      await settled(await master());
    },
    remove,
  };
}
