/**
 * Dashboard 2.0 (`@flowfuse/node-red-dashboard`, from the npm registry) for the end-to-end test of
 * examples/operator-dashboard.json: installed once into a cache directory outside the repository
 * (as node-red-runtimes.ts caches Node-RED 5) and linked into a test's Node-RED user directory, the
 * way the palette manager would have installed it there. It is no dependency of the package.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const DASHBOARD = '@flowfuse/node-red-dashboard';
/** The version examples/operator-dashboard.json records (its global-config node's `modules`). */
export const DASHBOARD_SPEC = `${DASHBOARD}@1.31.x`;
export const DASHBOARD_CACHE = process.env.E2E_DASHBOARD_CACHE ?? path.join(os.tmpdir(), 'node-red-rabbitmq-retry-dashboard-cache', 'node-red-dashboard-1.31.x');
const MARKER = '.dashboard.json';
const INSTALL_TIMEOUT_MS = 240_000;

async function install(): Promise<void> {
  mkdirSync(path.dirname(DASHBOARD_CACHE), { recursive: true });
  // Installed next to the cache and renamed into place when complete: a half-done install is never reused.
  const partial = `${DASHBOARD_CACHE}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(partial);
  try {
    writeFileSync(path.join(partial, 'package.json'), JSON.stringify({ name: 'node-red-dashboard-e2e-cache', version: '0.0.0', private: true }));
    const args = ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--prefix', partial, DASHBOARD_SPEC];
    try {
      await run('npm', args, { cwd: partial, timeout: INSTALL_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      const e = err as Error & { stdout?: string; stderr?: string };
      throw new Error(`npm ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, { cause: err });
    }
    const version = (JSON.parse(readFileSync(path.join(partial, 'node_modules', DASHBOARD, 'package.json'), 'utf8')) as { version: string }).version;
    writeFileSync(path.join(partial, MARKER), JSON.stringify({ version, installed: new Date().toISOString() }));
    try {
      renameSync(partial, DASHBOARD_CACHE);
    } catch (err) {
      if (!existsSync(path.join(DASHBOARD_CACHE, MARKER))) throw err; // another run finished first: keep its
    }
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** The cached install (installing it the first time); its version. */
export async function dashboardPackage(): Promise<{ dir: string; version: string }> {
  if (!existsSync(path.join(DASHBOARD_CACHE, MARKER))) await install();
  const dir = path.join(DASHBOARD_CACHE, 'node_modules', DASHBOARD);
  const version = (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  return { dir, version };
}

/** Links the cached Dashboard 2.0 into a Node-RED user directory's node_modules (its dependencies resolve from the cache). */
export async function addDashboard(userDir: string): Promise<string> {
  const { dir, version } = await dashboardPackage();
  const scope = path.join(userDir, 'node_modules', '@flowfuse');
  mkdirSync(scope, { recursive: true });
  symlinkSync(dir, path.join(scope, 'node-red-dashboard'), 'dir');
  return version;
}
