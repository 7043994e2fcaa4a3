/**
 * Private Redis and PostgreSQL servers for the tests that stop a store or need a password: started on
 * free loopback ports from the installed binaries, removed afterwards. The shared services are never
 * stopped by a test.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePorts } from './private-node';
import { waitFor } from './broker';
import { serviceUrls } from '../../scripts/services.mjs';

export const { database: DATABASE_URL, redis: REDIS_URL } = serviceUrls(process.env);

export interface PrivateServer {
  port: number;
  url: string;
  /** Stops the server (it can be started again with `start`). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its files. */
  remove(): Promise<void>;
}

async function portAnswers(port: number): Promise<boolean> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Why a test that needs a private Redis or PostgreSQL server is skipped without one. */
export const NO_PRIVATE_REDIS = 'needs redis-server installed here for a private Redis: sudo apt-get install redis-server';
export const NO_PRIVATE_POSTGRES = "needs PostgreSQL's initdb (/usr/lib/postgresql/<version>/bin) for a private server: sudo apt-get install postgresql";

export function canStartPrivateRedis(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0;
}

/**
 * A Redis server on a free port, with `requirepass` when a password is given. It keeps nothing on
 * disk, unless `aof`: then an append-only file in a directory of its own, fsynced every second
 * (`everysec`, the default) or before every reply (`always`).
 */
export async function startPrivateRedis(password?: string, options: { aof?: boolean; fsync?: 'always' | 'everysec' } = {}): Promise<PrivateServer> {
  const [port] = await freePorts(1);
  let child: ChildProcess | undefined;
  const dir = options.aof ? mkdtempSync(path.join(tmpdir(), 'rabbitmq-retry-redis-')) : undefined;
  const start = async (): Promise<void> => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', ''];
    args.push(...(dir ? ['--appendonly', 'yes', '--appendfsync', options.fsync ?? 'everysec', '--dir', dir] : ['--appendonly', 'no']));
    if (password) args.push('--requirepass', password);
    child = spawn('redis-server', args, { stdio: 'ignore' });
    await waitFor(() => portAnswers(port!), `private redis on ${port}`, 15_000);
  };
  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c) return;
    c.kill('SIGKILL');
    await exited(c);
  };
  await start();
  const remove = async (): Promise<void> => {
    await stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
  return { port: port!, url: `redis://127.0.0.1:${port}`, start, stop, remove };
}

function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort().pop();
  return version ? path.join(root, version, 'bin') : undefined;
}

export function canStartPrivatePostgres(): boolean {
  const bin = postgresBin();
  return bin !== undefined && existsSync(path.join(bin, 'initdb')) && (process.getuid?.() !== 0 || spawnSync('id', ['postgres']).status === 0);
}

/**
 * A PostgreSQL cluster of its own on a free port, with password (scram) authentication for the user
 * `postgres` over TCP. Runs as the `postgres` system user when the tests run as root (initdb refuses root).
 */
export async function startPrivatePostgres(password: string): Promise<PrivateServer> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql');
  const [port] = await freePorts(1);
  const dir = mkdtempSync(path.join(tmpdir(), 'rr-pg-'));
  chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const pwfile = path.join(dir, 'pw');
  writeFileSync(pwfile, password);
  chmodSync(pwfile, 0o644);
  const asPostgres = (cmd: string, args: string[]): string[] => (process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', cmd, ...args] : [cmd, ...args]);
  const [c0, ...a0] = asPostgres(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8']);
  const init = spawnSync(c0!, a0, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const pgCtl = (args: string[]): void => {
    const [c, ...a] = asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, ...args]);
    const run = spawnSync(c!, a, { encoding: 'utf8', timeout: 60_000 });
    if (run.status !== 0) throw new Error(`pg_ctl ${args.join(' ')} failed: ${run.stderr}`);
  };
  let running = false;
  const start = async (): Promise<void> => {
    pgCtl(['-w', '-l', path.join(dir, 'log'), '-o', `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off`, 'start']);
    running = true;
    await waitFor(() => portAnswers(port!), `private postgres on ${port}`, 30_000);
  };
  const stop = async (): Promise<void> => {
    if (!running) return;
    running = false;
    // An immediate shutdown, like a crash.
    pgCtl(['-w', '-m', 'immediate', 'stop']);
    await waitFor(async () => !(await portAnswers(port!)), 'private postgres stopped', 15_000);
  };
  await start();
  return {
    port: port!,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    remove: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
