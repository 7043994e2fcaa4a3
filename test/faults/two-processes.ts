/**
 * The two-process rows of the fault suite (issue 28): two real Node-RED processes with the same flow
 * consume one queue and deduplicate by messageId in one Redis of the run's own; every message is
 * published twice (the second copy 0–3 s after the first) — or, in the outbox row, written once into
 * an outbox table that a relay in each process publishes from. What each row does, and the pair of
 * processes it does it to.
 */
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NodeRedProcess, type NodeRedLaunch } from '../helpers/node-red-process';
import { managementFetch } from '../helpers/broker';
import type { PrivateServer } from '../helpers/private-stores';
import { pause, waitUntil, type BrokerNode } from './fault-broker';

/** What a row's fault gets to hurt. */
export interface PairContext {
  broker: BrokerNode;
  redis: PrivateServer;
  /** SIGKILLs process `i` (0 or 1). */
  kill: (i: number) => Promise<void>;
  /** Starts process `i` again on its user directory (the flow it saved) and waits for its admin API. */
  restart: (i: number) => Promise<void>;
}

export interface PairRow {
  /** In queue names and message ids. */
  id: string;
  /** In the table. */
  name: string;
  /** The Redis keeps an append-only file fsynced on every write (`--appendonly yes --appendfsync always`); otherwise nothing on disk. */
  aof: boolean;
  /** The claim lease (s). */
  leaseSeconds: number;
  /** The consumer's settle timeout (s). */
  settleTimeout: number;
  /** The flow drops about 5 % of the first copies' first deliveries (never settled: the settle timeout retries them). */
  dropFirst?: boolean;
  /** The consumer's prefetch, when not 20. */
  prefetch?: number;
  /** The flow holds each msg this long (ms) before its record and effect: messages are in the flow when the fault hits. */
  slowMs?: number;
  /** The deduplication store is PostgreSQL (the effect's database, the key recorded in its transaction) instead of the run's Redis. */
  postgresStore?: boolean;
  /** The events are written once into an outbox table; a relay in each process publishes them. */
  outbox?: boolean;
  /** Asserted: no effect repeated. */
  once: boolean;
  /** Asserted: every copy settled within the settle timeout + this many seconds of the end of publishing. */
  drainMarginS?: number;
  /** The row stops the Redis on purpose (the consumer says so as an error). */
  storeRow?: boolean;
  inject(ctx: PairContext): Promise<void>;
}

/** The lease of the rows that do not ask for the 40 s: a killed process's claims end within it. */
const LEASE_S = 20;
const SETTLE_S = 10;

const killAndRestart = async ({ kill, restart }: PairContext): Promise<void> => {
  await kill(0);
  await pause(5_000);
  await restart(0);
};

const closeAll = async ({ broker }: PairContext, times: number): Promise<void> => {
  for (let i = 0; i < times; i += 1) {
    if (i > 0) await pause(4_000);
    await broker.ctl('close_all_connections', 'fault suite');
  }
};

/** A request to the management API of the run's broker; fails on an answer other than 2xx or 404. */
async function managementApi({ broker }: PairContext, path: string, init: RequestInit = {}): Promise<Response> {
  const response = await managementFetch(path, init, broker.managementUrl);
  if (!response.ok && response.status !== 404) throw new Error(`management ${init.method ?? 'GET'} ${path}: ${response.status}`);
  return response;
}

/** The broker refuses new connections to the vhost (`max-connections` 0), or takes them again. */
async function refuseConnections(ctx: PairContext, refuse: boolean): Promise<void> {
  const path = 'vhost-limits/%2F/max-connections';
  await managementApi(ctx, path, refuse ? { method: 'PUT', body: JSON.stringify({ value: 0 }) } : { method: 'DELETE' });
}

/** The connections of both Node-RED processes (not the test's), each closed through the management API (DELETE /api/connections/<name>). */
const closeNodeRedConnections = async (ctx: PairContext): Promise<void> => {
  const api = (path: string, method = 'GET'): Promise<Response> => managementApi(ctx, path, { method, headers: { 'x-reason': 'fault suite' } });
  let names: string[] = [];
  // Its list lags the connections by a few seconds: both processes' are waited for.
  await waitUntil(async () => {
    const list = (await (await api('connections?columns=name,client_properties')).json()) as Array<{ name: string; client_properties?: { connection_name?: string } }>;
    names = list.filter((c) => c.client_properties?.connection_name?.startsWith('node-red ')).map((c) => c.name);
    return names.length >= 2;
  }, "both Node-RED processes' connections in the management API");
  await Promise.all(names.map((name) => api(`connections/${encodeURIComponent(name)}`, 'DELETE')));
};

const redisRestart = async ({ redis }: PairContext): Promise<void> => {
  await redis.stop();
  await pause(3_000);
  await redis.start();
};

const base = { aof: false, leaseSeconds: LEASE_S, settleTimeout: SETTLE_S, once: true };

export const PAIR_ROWS: PairRow[] = [
  { ...base, id: 'pair-none', name: 'none', inject: () => Promise.resolve() },
  // Reported: a kill between the effect's commit and its key recorded in Redis repeats the effect (not one transaction).
  { ...base, id: 'pair-sigkill', name: 'SIGKILL of one process, restarted 5 s later (reported)', once: false, inject: killAndRestart },
  { ...base, id: 'pair-sigkill-pg', name: 'SIGKILL of one process, restarted 5 s later · keys in PostgreSQL', postgresStore: true, inject: killAndRestart },
  { ...base, id: 'pair-close-all', name: "both processes' connections closed (`close_all_connections` ×2)", inject: (ctx) => closeAll(ctx, 2) },
  { ...base, id: 'pair-redis-aof', name: 'Redis restart, AOF (`appendfsync always`)', aof: true, storeRow: true, inject: redisRestart },
  { ...base, id: 'pair-redis-empty', name: 'Redis restart, nothing on disk (reported)', once: false, storeRow: true, inject: redisRestart },
  {
    ...base,
    id: 'pair-drop',
    name: 'lease 40 s, settle timeout 10 s, 5 % of first deliveries never settled, `close_all_connections` ×1',
    leaseSeconds: 40,
    dropFirst: true,
    // The dropped deliveries and the copies held behind them fill about 100 slots at 100 ids/s.
    prefetch: 100,
    // A lost channel's keys are released as much later as the connection was down (a second or two here).
    drainMarginS: 7,
    inject: (ctx) => closeAll(ctx, 1),
  },
  {
    ...base,
    id: 'pair-delete-in-flight',
    name: "both processes' connections closed while their flows hold messages (management API DELETE, new connections refused for 12 s, then DELETE again), a 500 ms step",
    slowMs: 500,
    inject: async (ctx) => {
      // Longer than the settle timeout: the flows' records wait for the broker, what they hold outlives its settle deadline.
      await refuseConnections(ctx, true);
      try {
        await closeNodeRedConnections(ctx);
        await pause(12_000);
      } finally {
        await refuseConnections(ctx, false);
      }
      await pause(4_000);
      await closeNodeRedConnections(ctx);
    },
  },
  {
    ...base,
    id: 'pair-outbox',
    name: 'two outbox relays on one table, one process SIGKILLed (not restarted) · keys in PostgreSQL',
    outbox: true,
    postgresStore: true,
    inject: (ctx) => ctx.kill(0),
  },
];

/** Two Node-RED processes (or as many as user directories), each on a user directory of its own (copies of one with the package installed). */
export class Pair {
  readonly processes: Array<NodeRedProcess | undefined>;
  /** Output of processes killed earlier, per slot. */
  private readonly earlier: string[][];

  private constructor(
    private readonly launch: NodeRedLaunch,
    private readonly userDirs: string[],
    private readonly env: Record<string, string>,
    private readonly nodeArgs: string[] = [],
  ) {
    this.processes = userDirs.map(() => undefined);
    this.earlier = userDirs.map(() => []);
  }

  /** A second user directory beside `userDir`, with the same installed package. */
  static copyUserDir(userDir: string): string {
    const copy = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-userdir-'));
    cpSync(userDir, copy, { recursive: true, verbatimSymlinks: true });
    return copy;
  }

  /** Starts the first `count` processes (all by default); the others start with `restart(i)`. `nodeArgs` go before red.js in every start. */
  static async start(launch: NodeRedLaunch, userDirs: string[], env: Record<string, string>, count = userDirs.length, nodeArgs: string[] = []): Promise<Pair> {
    const pair = new Pair(launch, userDirs, env, nodeArgs);
    // No flow of an earlier run: it would declare that run's (deleted) queues again.
    for (const dir of userDirs) writeFileSync(path.join(dir, 'flows.json'), '[]');
    await Promise.all(userDirs.slice(0, count).map((_, i) => pair.restart(i)));
    return pair;
  }

  async restart(i: number): Promise<void> {
    this.processes[i] = await NodeRedProcess.start({ launch: this.launch, userDir: this.userDirs[i]!, env: this.env, nodeArgs: this.nodeArgs });
  }

  async kill(i: number): Promise<void> {
    const red = this.processes[i];
    if (!red) return;
    this.processes[i] = undefined;
    this.earlier[i]!.push(red.output);
    await red.kill('SIGKILL');
  }

  /** Stops process `i` as an operator would (SIGTERM: Node-RED closes its nodes). */
  async stopOne(i: number): Promise<void> {
    const red = this.processes[i];
    if (!red) return;
    this.processes[i] = undefined;
    await red.stop();
    this.earlier[i]!.push(red.output);
  }

  /** The processes running now. */
  get running(): NodeRedProcess[] {
    return this.processes.filter((red): red is NodeRedProcess => red !== undefined);
  }

  async stop(): Promise<void> {
    await Promise.all(this.running.map((red) => red.stop()));
  }

  /** Every output of slot `i`, killed processes first. */
  output(i: number): string {
    return [...this.earlier[i]!, this.processes[i]?.output ?? ''].join('\n--- restarted ---\n');
  }

  lines(): string[] {
    return this.userDirs.flatMap((_, i) => this.output(i).split('\n'));
  }

  log(): string {
    return this.userDirs.map((_, i) => `\n--- Node-RED ${i + 1} ---\n${this.output(i).slice(-4000)}`).join('');
  }
}
