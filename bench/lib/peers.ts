/**
 * The peers section: raw amqplib, this package and other Node-RED AMQP packages with manual ack,
 * measured the way an outside reviewer did: every contestant in a fresh OS process per run (one
 * Node-RED process per package, a plain `node` process for raw amqplib), a queue preloaded with
 * persistent 1 KB JSON messages, prefetch 100, each message acked by the contestant's own mechanism.
 *
 * Each process gets the bench's probe preloaded (`node --require probe.cjs`): it times the process
 * from the delivery after its warm-up (PLAN.peersWarmUp deliveries, whose CPU it reports apart) to
 * its N-th ack and writes the result to a file this module names; then the process is stopped. The Node-RED processes run as a user runs them (no tsx, no loader), with the
 * flow deployed through the admin API once Node-RED is up.
 *
 * Nothing is installed into the repository: the package is `npm pack`ed into a temporary user
 * directory (test/helpers/node-red-process.ts, as the e2e test does); the other packages get their
 * own Node-RED user directories under BENCH_PEERS_DIR. A package that is not on the registry mirror
 * is measured only when it was built from its source into BENCH_PEERS_DIR/from-source/<dir>
 * (docs/benchmark.md); otherwise it is skipped with a note.
 *
 * The other packages consume a plain durable queue: the retry topology's main queue has dead-letter
 * arguments, which they would declare without (406) or not read.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { nodeRed4 } from '../../test/e2e/node-red-runtimes';
import { waitFor } from '../../test/helpers/broker';
import { tab, type Names } from '../../test/helpers/flows';
import { NodeRedProcess, packPackage, PACKAGE, repoPackage, userDirWith, type NodeRedLaunch } from '../../test/helpers/node-red-process';
import type { RunResult } from './common';
import { positioned, type FlowNode } from './nodered';
import { childProbeEnv, PROBE_FILE, type ChildResult } from './probe.cjs';
import { benchBroker, benchConfig, benchConsumer, settleNode, timeoutFor, waitForConsumer } from './scenarios';

const run = promisify(execFile);

export const PEERS_DIR = process.env.BENCH_PEERS_DIR ?? path.join(os.homedir(), '.cache', 'node-red-contrib-rabbitmq-retry', 'bench-peers');
const RAW_CONSUMER = path.join(__dirname, 'raw-consumer.cjs');
/** The peers row every other is also compared with: raw amqplib doing the same work with batched acks. */
export const BATCHED_PEER_KEY = 'peerRawBatched';

/** One row of the peers table, ready to run. */
export interface Contestant {
  label: string;
  /** Key prefix of its figures in the bench's JSON line (`<key>MsgPerSec`, …). */
  key: string;
  ack: string;
  /** The queue it consumes (preloaded before each run). */
  queue: string;
  /** The table's version column: `<version> (<amqplib>)`, amqplib as the probe found it in the process. */
  version(): string;
  /** One run in a fresh process: `warmUp` messages consumed and acked, then `count` more timed. */
  run(warmUp: number, count: number): Promise<RunResult>;
}

export interface Peers {
  contestants: Contestant[];
  /** Notes on packages that were not measured. */
  skipped: string[];
  /** Removes the temporary user directory (the processes are stopped after each run). */
  dispose(): void;
}

/** A process being measured. */
interface Measured {
  readonly exited: boolean;
  /** Its output's tail, for error messages. */
  log(): string;
  stop(): Promise<void>;
}
type Start = (probe: { env: Record<string, string>; nodeArgs: string[] }) => Promise<Measured>;

// ------------------------------------------------------------------------------------------------
// Processes

const rawProcesses = new Set<ChildProcess>();

/** A plain node process running raw-consumer.cjs (not Node-RED). */
function startRaw(queue: string, prefetch: number, work: 'none' | 'msg' | 'msg-later-batched', url: string): Start {
  return ({ env, nodeArgs }) => {
    // Without NODE_OPTIONS, as for Node-RED: no loader of the bench's own runner (tsx) is inherited.
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, AMQP_URL: url };
    delete childEnv.NODE_OPTIONS;
    const child = spawn(process.execPath, [...nodeArgs, RAW_CONSUMER, queue, String(prefetch), work], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    rawProcesses.add(child);
    child.once('exit', () => rawProcesses.delete(child));
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = (): boolean => child.exitCode !== null || child.signalCode !== null;
    return Promise.resolve({
      get exited() {
        return exited();
      },
      log: () => `\n--- raw consumer output ---\n${output.slice(-8000)}`,
      stop: async () => {
        if (exited()) return;
        const ended = new Promise((resolve) => child.once('exit', resolve));
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.kill('SIGTERM');
        await ended;
        clearTimeout(killer);
      },
    });
  };
}

/**
 * A Node-RED process on `userDir`: started with no flow, then `flow` deployed through the admin API,
 * so every run starts the same way and the timed window never overlaps Node-RED's start.
 */
function startNodeRed(launch: NodeRedLaunch, userDir: string, flow: FlowNode[]): Start {
  return async ({ env, nodeArgs }) => {
    writeFileSync(path.join(userDir, 'flows.json'), '[]');
    const red = await NodeRedProcess.start({ launch, userDir, env, nodeArgs });
    try {
      await red.deploy(positioned(flow));
    } catch (err) {
      await red.stop();
      throw err;
    }
    return {
      get exited() {
        return red.exited;
      },
      log: () => red.log(),
      stop: () => red.stop(),
    };
  };
}

/** Stops every process this section started (failure, SIGINT). */
export async function stopPeerProcesses(): Promise<void> {
  for (const child of rawProcesses) child.kill('SIGKILL');
  await Promise.all([...NodeRedProcess.running].map((red) => red.stop()));
}

// A last resort when the bench exits without its cleanup: no consumer process outlives it.
process.once('exit', () => {
  for (const child of rawProcesses) child.kill('SIGKILL');
  for (const red of NodeRedProcess.running) red.child.kill('SIGKILL');
});

/** More options for each measured process, e.g. BENCH_PEERS_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' (a profile of each run; see bench/tools/profile.ts --summarize). */
const EXTRA_NODE_ARGS = (process.env.BENCH_PEERS_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
/** Where each measured process's output tail is written (BENCH_PEERS_LOG_DIR), e.g. with BENCH_PEERS_NODE_ARGS='--trace-gc'. */
const LOG_DIR = process.env.BENCH_PEERS_LOG_DIR;
/**
 * Only these contestants (BENCH_PEERS_ONLY: their keys, comma-separated, e.g.
 * 'peerRawBatched,peerPackage'), for a closer look at a few; the ratio column is then against the first kept.
 */
const ONLY_KEYS = process.env.BENCH_PEERS_ONLY?.split(',').map((k) => k.trim()).filter((k) => k !== '');

let results: string | undefined;
let runNumber = 0;

/** Starts a process with the probe preloaded, waits for its result file, stops the process. `count`: the acks it takes in all, the first `warmUp` deliveries untimed. */
async function measure(label: string, count: number, warmUp: number, start: Start): Promise<ChildResult> {
  results ??= mkdtempSync(path.join(os.tmpdir(), 'bench-peers-results-'));
  runNumber += 1;
  const out = path.join(results, `run-${runNumber}.json`);
  const child = await start({ env: childProbeEnv(out, count, warmUp), nodeArgs: ['--require', PROBE_FILE, ...EXTRA_NODE_ARGS] }).catch((err: unknown) => {
    throw new Error(`${label}: ${err instanceof Error ? err.message : String(err)}`);
  });
  try {
    await waitFor(
      () => {
        if (child.exited) throw new Error(`${label}: its process ended before ${count} acks${child.log()}`);
        return existsSync(out);
      },
      `${label}: ${count} acks`,
      timeoutFor(count),
    ).catch((err: unknown) => {
      throw child.exited || !(err instanceof Error) ? err : new Error(`${err.message}${child.log()}`);
    });
    return JSON.parse(readFileSync(out, 'utf8')) as ChildResult;
  } finally {
    if (LOG_DIR !== undefined) {
      mkdirSync(LOG_DIR, { recursive: true });
      writeFileSync(path.join(LOG_DIR, `run-${runNumber}.log`), `${label}\n${child.log()}`);
    }
    await child.stop();
    rmSync(out, { force: true });
  }
}

// ------------------------------------------------------------------------------------------------
// Contestants

/** The broker of AMQP_URL as the peers' config nodes take it. */
const brokerOf = (u: URL): { address: { host: string; port: string; vhost: string }; user: string; password: string } => ({
  address: { host: u.hostname, port: u.port || '5672', vhost: decodeURIComponent(u.pathname.slice(1)) },
  user: decodeURIComponent(u.username || 'guest'),
  password: decodeURIComponent(u.password || 'guest'),
});

/** Another Node-RED package with manual ack. */
interface PeerSpec {
  name: string;
  key: string;
  ack: string;
  /** An exact version from the registry, or a directory it was built into from its source. */
  from: { registry: string } | { sourceDir: string };
  /** Consume `queue` with manual ack at `prefetch`: the flow to deploy (credentials inline). */
  flow(url: URL, queue: string, prefetch: number): FlowNode[];
}

/** node-red-contrib-amqp-ack: "amqp in" with the server's prefetch on, then an "amqp ack" node (amqp-ts over amqplib 0.4). */
const amqpAck: PeerSpec = {
  name: 'node-red-contrib-amqp-ack',
  key: 'peerAmqpAck',
  ack: '"amqp ack" node',
  from: { registry: '1.1.2' },
  flow: (u, queue, prefetch) => {
    const { address, user, password } = brokerOf(u);
    const server = {
      id: 'peer-server',
      type: 'amqp-server',
      ...address,
      keepalive: '30',
      usetls: false,
      usetopology: false,
      prefetch: true,
      prefetchvalue: String(prefetch),
      prefetchack: false,
      credentials: { user, password },
    };
    const common = { z: 'flow', iotype: '4', ioname: queue, server: 'peer-server', topic: '' };
    return [tab(), server, { id: 'peer-in', type: 'amqp in', ...common, wires: [['peer-ack']] }, { id: 'peer-ack', type: 'amqp ack', ...common, nack: false, wires: [[]] }];
  },
};

/**
 * The manual-ack flow of @meowwolf/node-red-contrib-amqp and its fork @frankvdb/…: an "amqp-broker"
 * config node and "amqp-in-manual-ack" with its output wired back into its own input, which acks.
 * `extra`: the fork's additional fields.
 */
function manualAckFlow(u: URL, queue: string, prefetch: number, extra: FlowNode = {}): FlowNode[] {
  const { address, user, password } = brokerOf(u);
  const broker = {
    id: 'peer-broker',
    type: 'amqp-broker',
    ...address,
    tls: false,
    credsFromSettings: false,
    credentials: { username: user, password },
  };
  const consumer = {
    id: 'peer-in',
    type: 'amqp-in-manual-ack',
    z: 'flow',
    broker: 'peer-broker',
    prefetch: String(prefetch),
    noAck: false,
    // No exchange: consume the queue as it is (durable, as the bench declares it).
    exchangeName: '',
    exchangeType: 'direct',
    exchangeRoutingKey: '',
    exchangeDurable: true,
    queueName: queue,
    queueExclusive: false,
    queueDurable: true,
    queueAutoDelete: false,
    amqpProperties: '{}',
    headers: '{}',
    ...extra,
    wires: [['peer-in']],
  };
  return [tab(), broker, consumer];
}

/** @meowwolf/node-red-contrib-amqp (not on this registry mirror; amqplib 0.8, promise API): its README's manual ack. */
const meowWolf: PeerSpec = {
  name: '@meowwolf/node-red-contrib-amqp',
  key: 'peerMeowWolfAmqp',
  ack: 'msg back into the manual-ack input',
  from: { sourceDir: path.join(PEERS_DIR, 'from-source', 'meowwolf-node-red-contrib-amqp') },
  flow: (u, queue, prefetch) => manualAckFlow(u, queue, prefetch),
};

/**
 * @frankvdb/node-red-contrib-amqp (a maintained fork of @meowwolf's, not on this registry mirror;
 * amqplib 0.10): the same manual ack. Its default "auto-create queue: off" consumes the existing
 * queue without declaring it.
 */
const frankvdb: PeerSpec = {
  name: '@frankvdb/node-red-contrib-amqp',
  key: 'peerFrankvdbAmqp',
  ack: 'msg back into the manual-ack input',
  from: { sourceDir: path.join(PEERS_DIR, 'from-source', 'frankvdb-node-red-contrib-amqp') },
  flow: (u, queue, prefetch) =>
    manualAckFlow(u, queue, prefetch, { reconnectOnError: false, autoCreateExchangeBindings: false, autoCreateQueue: false, queueType: 'classic', queueArguments: '{}' }),
};

export const PEER_SPECS: PeerSpec[] = [amqpAck, meowWolf, frankvdb];

interface PackageJson {
  name?: string;
  version?: string;
  'node-red'?: { nodes?: Record<string, string> };
}
const readPackageJson = (dir: string): PackageJson | undefined => {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageJson;
  } catch {
    return undefined;
  }
};

/** A Node-RED user directory of the bench's own (`BENCH_PEERS_DIR/userdirs/<key>`). */
function peerUserDir(key: string): string {
  const dir = path.join(PEERS_DIR, 'userdirs', key);
  mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
  if (!existsSync(path.join(dir, 'package.json'))) writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name: `bench-${key}`, private: true }, null, 2)}\n`);
  return dir;
}

/**
 * Installs a peer into its user directory: from the registry (once; later runs reuse it), or a link
 * to the directory it was built into (so a rebuild is picked up). Returns its version, or why not.
 */
async function installPeer(spec: PeerSpec, log: (text: string) => void): Promise<{ userDir: string; version: string } | { skipped: string }> {
  if ('registry' in spec.from) {
    const userDir = peerUserDir(spec.key);
    if (readPackageJson(path.join(userDir, 'node_modules', spec.name))?.version !== spec.from.registry) {
      log(`   installing ${spec.name}@${spec.from.registry} into ${userDir}`);
      await run('npm', ['install', '--no-audit', '--no-fund', '--no-save', `${spec.name}@${spec.from.registry}`], { cwd: userDir, maxBuffer: 16 * 1024 * 1024 });
    }
    return { userDir, version: spec.from.registry };
  }
  const { sourceDir } = spec.from;
  const pkg = readPackageJson(sourceDir);
  const nodeFiles = Object.values(pkg?.['node-red']?.nodes ?? {});
  if (pkg?.name !== spec.name || nodeFiles.length === 0) return { skipped: `not on the registry mirror and not built from source in ${sourceDir} (docs/benchmark.md)` };
  const missing = nodeFiles.filter((file) => !existsSync(path.join(sourceDir, file)));
  if (missing.length > 0 || !existsSync(path.join(sourceDir, 'node_modules'))) {
    return { skipped: `its build in ${sourceDir} is incomplete (${missing.length > 0 ? `missing ${missing.join(', ')}` : 'no node_modules'})` };
  }
  const userDir = peerUserDir(spec.key);
  const installed = path.join(userDir, 'node_modules', spec.name);
  mkdirSync(path.dirname(installed), { recursive: true });
  const linked = lstatSync(installed, { throwIfNoEntry: false });
  if (linked && !(linked.isSymbolicLink() && readlinkSync(installed) === sourceDir)) {
    if (!linked.isSymbolicLink()) throw new Error(`${installed} exists and is not the bench's link to ${sourceDir}: remove it`);
    unlinkSync(installed);
  }
  if (!lstatSync(installed, { throwIfNoEntry: false })) symlinkSync(sourceDir, installed, 'dir');
  return { userDir, version: `${pkg.version ?? '?'}*` };
}

/** Version column: `<version> (<amqplib>)`; the amqplib copies are the ones the probe wrapped in the last run. */
function versionText(version: string | undefined, amqplib: Set<string>): string {
  const copies = amqplib.size > 0 ? [...amqplib].join(', ') : '?';
  return version === undefined ? copies : `${version} (${copies})`;
}

/** A contestant: its version, and each run measured in a fresh process started by `start`. */
function contestant(label: string, key: string, ack: string, queue: string, version: string | undefined, start: Start): Contestant {
  const amqplib = new Set<string>();
  return {
    label,
    key,
    ack,
    queue,
    version: () => versionText(version, amqplib),
    run: async (warmUp, count) => {
      const result = await measure(label, warmUp + count, warmUp, start);
      if (result.amqplib.length === 0) throw new Error(`${label}: the probe wrapped no amqplib copy`);
      amqplib.clear();
      for (const v of result.amqplib) amqplib.add(v);
      return result;
    },
  };
}

/**
 * Prepares the contestants: raw amqplib (three times: ack only, the same work as the package, and the
 * same work with acks batched per event-loop turn as the package batches them), the
 * package (packed, installed into a fresh user directory, its retry topology declared by the package
 * itself in one Node-RED start), and each peer that is installed or can be.
 */
export async function preparePeers({ url, plainQueue, topology, prefetch, log }: { url: string; plainQueue: string; topology: Names; prefetch: number; log: (text: string) => void }): Promise<Peers> {
  const launch = await nodeRed4.prepare();
  const temporary: string[] = [];
  const dispose = (): void => {
    for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
    if (results) rmSync(results, { recursive: true, force: true });
    results = undefined;
  };
  try {
    const contestants: Contestant[] = [
      contestant('raw amqplib', 'peerRawConsumeAck', 'channel.ack', plainQueue, undefined, startRaw(plainQueue, prefetch, 'none', url)),
      contestant('raw amqplib doing the same work', 'peerRawSameWork', 'channel.ack', plainQueue, undefined, startRaw(plainQueue, prefetch, 'msg', url)),
      contestant('raw amqplib doing the same work, acks batched', BATCHED_PEER_KEY, 'channel.ack(m, true) per turn', plainQueue, undefined, startRaw(plainQueue, prefetch, 'msg-later-batched', url)),
    ];

    log(`   packing ${PACKAGE} into a fresh Node-RED user directory`);
    const packDir = mkdtempSync(path.join(os.tmpdir(), 'bench-peers-pack-'));
    temporary.push(packDir);
    const userDir = await userDirWith(await packPackage(packDir));
    temporary.push(userDir);
    const flow = [tab(), benchBroker({ url }), benchConfig(topology), benchConsumer([['ack']], prefetch), settleNode('ack', 'ack')];
    await declareTopology(launch, userDir, flow, topology.mainQueue);
    contestants.push(contestant(PACKAGE, 'peerPackage', 'retry-consumer → retry-settle (ack)', topology.mainQueue, repoPackage.version, startNodeRed(launch, userDir, flow)));

    const skipped: string[] = [];
    const u = new URL(url);
    for (const spec of PEER_SPECS) {
      const peer = await installPeer(spec, log);
      if ('skipped' in peer) {
        skipped.push(`${spec.name}: ${peer.skipped}`);
        log(`   ${spec.name}: skipped, ${peer.skipped}`);
        continue;
      }
      contestants.push(contestant(spec.name, spec.key, spec.ack, plainQueue, peer.version, startNodeRed(launch, peer.userDir, spec.flow(u, plainQueue, prefetch))));
    }
    return { contestants: ONLY_KEYS ? contestants.filter((c) => ONLY_KEYS.includes(c.key)) : contestants, skipped, dispose };
  } catch (err) {
    dispose();
    throw err;
  }
}

/**
 * The package declares its topology itself (mode declare), with the arguments its version uses: one
 * Node-RED start with the flow on the still empty queue, until its consumer is up.
 */
async function declareTopology(launch: NodeRedLaunch, userDir: string, flow: FlowNode[], queue: string): Promise<void> {
  writeFileSync(path.join(userDir, 'flows.json'), '[]');
  const red = await NodeRedProcess.start({ launch, userDir });
  try {
    await red.deploy(positioned(flow));
    await waitForConsumer(queue).catch((err: unknown) => {
      throw new Error(`${PACKAGE} did not declare and consume ${queue}: ${err instanceof Error ? err.message : String(err)}${red.log()}`);
    });
  } finally {
    await red.stop();
  }
}
