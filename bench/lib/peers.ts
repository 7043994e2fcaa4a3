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
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeRed4 } from '../../test/e2e/node-red-runtimes';
import { waitFor } from '../../test/helpers/broker';
import { tab, type Names } from '../../test/helpers/flows';
import { NodeRedProcess, packPackage, PACKAGE, repoPackage, userDirWith, type NodeRedLaunch } from '../../test/helpers/node-red-process';
import type { RunResult } from './common';
import { positioned, type FlowNode } from './nodered';
import { childProbeEnv, PROBE_FILE, type ChildResult } from './probe.cjs';
import { installPeer, PEER_SPECS } from './peer-specs';
import { benchBroker, benchConfig, benchConsumer, settleNode, timeoutFor, waitForConsumer } from './scenarios';

export { PEERS_DIR } from './peer-specs';

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
