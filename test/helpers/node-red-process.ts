/**
 * A real Node-RED process with the package as a user installs it: `npm pack` output installed into a
 * fresh user directory, Node-RED started on a free port and driven through its admin HTTP API.
 * Shared by the e2e test (test/e2e) and the fault suite (test/faults).
 *
 * Needs `npm run build` first: the tarball packs dist/.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { waitFor } from './broker';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');

export const repoPackage = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  'node-red': { nodes: Record<string, string> };
};
export const PACKAGE = repoPackage.name;

/** How to start one Node-RED version (see test/e2e/node-red-runtimes.ts). */
export interface NodeRedLaunch {
  /** The node binary to run red.js with. */
  node: string;
  redJs: string;
}

/** Packs the package as it would be published into `packDir`; returns the tarball's path. */
export async function packPackage(packDir: string): Promise<string> {
  if (!existsSync(path.join(root, 'dist', 'nodes', 'retry-consumer', 'retry-consumer.js')) || !existsSync(path.join(root, 'resources', 'editor.js'))) {
    throw new Error('dist/ or resources/ is missing: run `npm run build` first (npm pack ships the build output, `npm test` builds it)');
  }
  const packed = await run('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  const [info] = JSON.parse(packed.stdout) as { filename: string }[];
  assert.ok(info, `npm pack printed no result: ${packed.stdout} ${packed.stderr}`);
  const tarball = path.join(packDir, info.filename);
  assert.ok(existsSync(tarball), `npm pack did not write ${tarball}`);
  return tarball;
}

/** A fresh Node-RED user directory (in the system temp dir) with the tarball installed the way the palette manager would. */
export async function userDirWith(tarball: string): Promise<string> {
  const userDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-userdir-'));
  writeFileSync(path.join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-e2e-userdir', version: '0.0.0', private: true }));
  await run('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline', tarball], {
    cwd: userDir,
    maxBuffer: 16 * 1024 * 1024,
  });
  assert.ok(existsSync(path.join(userDir, 'node_modules', PACKAGE, 'package.json')), 'npm install did not install the tarball');
  writeFileSync(path.join(userDir, 'flows.json'), '[]');
  return userDir;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface NodeRedOptions {
  launch: NodeRedLaunch;
  userDir: string;
  /** Added to the environment (e.g. AMQP_URL for `${AMQP_URL}` in the flow). */
  env?: Record<string, string>;
  /** Left out of the environment even when the test's own has them (a Node-RED started without them). */
  unsetEnv?: string[];
  /** Node.js options before red.js, e.g. `['--require', preload]` (the bench's probe). */
  nodeArgs?: string[];
  /** More settings.js properties, as source text (e.g. `adminAuth: {…},`). */
  extraSettings?: string;
  /** What answers once the admin API is up; default GET /settings (which adminAuth protects). */
  readyRoute?: string;
}

/** One running Node-RED process; its output is kept for failure messages and log checks. */
export class NodeRedProcess {
  /** Every process started and not yet ended, also while start() waits for it: an interrupted caller can stop them all. */
  static readonly running = new Set<NodeRedProcess>();

  output = '';

  private constructor(
    readonly child: ChildProcess,
    readonly base: string,
  ) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    NodeRedProcess.running.add(this);
    child.once('exit', () => NodeRedProcess.running.delete(this));
  }

  /** Writes settings.js for a free port, starts Node-RED and waits until its admin API answers. */
  static async start(options: NodeRedOptions): Promise<NodeRedProcess> {
    const port = await freePort();
    writeFileSync(
      path.join(options.userDir, 'settings.js'),
      `module.exports = {
  flowFile: 'flows.json',
  credentialSecret: 'e2e-test-secret',
  uiHost: '127.0.0.1',
  uiPort: ${port},
  diagnostics: { enabled: false },
  telemetry: { enabled: false },
  editorTheme: { projects: { enabled: false }, tours: false, palette: { catalogues: [] } },
  logging: { console: { level: 'info', metrics: false, audit: false } },
  ${options.extraSettings ?? ''}
};
`,
    );
    // Without NODE_OPTIONS, so no loader hook of the test runner (tsx) is inherited.
    const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
    delete env.NODE_OPTIONS;
    for (const name of options.unsetEnv ?? []) Reflect.deleteProperty(env, name);
    const child = spawn(options.launch.node, [...(options.nodeArgs ?? []), options.launch.redJs, '--userDir', options.userDir, '--port', String(port)], {
      cwd: options.userDir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const red = new NodeRedProcess(child, `http://127.0.0.1:${port}`);
    try {
      await waitFor(
        async () => {
          if (red.exited) throw new Error(`Node-RED exited with code ${child.exitCode}${red.log()}`);
          return red.api('GET', options.readyRoute ?? '/settings').then(
            (r) => r.ok,
            () => false,
          );
        },
        'the Node-RED admin API',
        60_000,
      );
    } catch (err) {
      await red.stop();
      throw err;
    }
    return red;
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Node-RED's output so far, for failure messages. */
  log(): string {
    return `\n--- Node-RED output ---\n${this.output.slice(-8000)}`;
  }

  /** Complete output lines so far. */
  lines(): string[] {
    return this.output.slice(0, this.output.lastIndexOf('\n') + 1).split('\n');
  }

  async api(method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const all: Record<string, string> = { accept: 'application/json', ...headers };
    const init: RequestInit = { method, headers: all };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      all['content-type'] = 'application/json';
    }
    return fetch(`${this.base}${route}`, init);
  }

  async getJson(route: string): Promise<unknown> {
    const response = await this.api('GET', route);
    assert.equal(response.status, 200, `GET ${route}: ${response.status} ${await response.clone().text()}${this.log()}`);
    return response.json();
  }

  /**
   * The status a node shows now, as the editor gets it: through the comms websocket, where Node-RED
   * keeps each node's last status (`status/<id>`) for whoever subscribes. Undefined when the node
   * has shown none within `ms`.
   */
  async status(id: string, ms = 5000): Promise<{ text?: string; fill?: string; shape?: string } | undefined> {
    const socket = new WebSocket(`${this.base.replace(/^http/, 'ws')}/comms`);
    try {
      return await new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve(undefined), ms);
        socket.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
        socket.on('open', () => socket.send(JSON.stringify({ subscribe: `status/${id}` })));
        socket.on('message', (data) => {
          const parsed = JSON.parse((data as Buffer).toString('utf8')) as unknown; // text frames arrive as a Buffer
          for (const m of (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ topic?: string; data?: { text?: string; fill?: string; shape?: string } }>) {
            if (m.topic !== `status/${id}`) continue;
            clearTimeout(timer);
            resolve(m.data);
          }
        });
      });
    } finally {
      socket.close();
    }
  }

  /** A full deploy (every node restarts), as the editor's Deploy ▸ Full does. */
  async deploy(flow: unknown[]): Promise<void> {
    const response = await this.api('POST', '/flows', flow, { 'Node-RED-Deployment-Type': 'full' });
    assert.ok(response.ok, `deploy failed: ${response.status} ${await response.text()}${this.log()}`);
  }

  /** Sends a signal and waits for the process to end. */
  async kill(signal: NodeJS.Signals): Promise<void> {
    if (this.exited) return;
    const ended = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill(signal);
    await ended;
  }

  /** SIGTERM (Node-RED closes its nodes), SIGKILL after 10 s. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.kill('SIGTERM');
    clearTimeout(killer);
  }
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's own bcrypt, CommonJS
const bcrypt = require(require.resolve('bcryptjs', { paths: [path.dirname(require.resolve('node-red/package.json'))] })) as { hashSync(text: string, rounds: number): string };

/** settings.js's `adminAuth` (for `extraSettings`) with one user who may only read. */
export function readOnlyAdminAuth(username: string, password: string): string {
  return `adminAuth: { type: 'credentials', users: [{ username: ${JSON.stringify(username)}, password: ${JSON.stringify(bcrypt.hashSync(password, 8))}, permissions: 'read' }] },`;
}

/** A bearer token for a user of `adminAuth`, with the `read` scope. */
export async function readToken(red: NodeRedProcess, username: string, password: string): Promise<string> {
  const token = await fetch(`${red.base}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: 'node-red-admin', grant_type: 'password', scope: 'read', username, password }),
  });
  assert.equal(token.status, 200, await token.clone().text());
  return ((await token.json()) as { access_token: string }).access_token;
}
