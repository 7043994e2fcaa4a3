/**
 * Other Node-RED AMQP packages with manual ack, run in the same Node-RED runtime, on the same broker,
 * with the same messages as this package. Registry peers are installed at bench time into a cache
 * directory outside the repository (BENCH_PEERS_DIR), never committed. A peer that is not on this
 * registry mirror is measured only when someone built it from its source under
 * `BENCH_PEERS_DIR/from-source/<dir>` (docs/benchmark.md); otherwise it is skipped with a note.
 *
 * Peers consume a plain queue: none of them can attach to a queue with x-dead-letter arguments
 * (they declare it without them and get a 406), and none reports an attempt count.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tab } from '../../test/helpers/flows';
import { armProbe, installProbe, probeCounts, probeResult, withTimeout, type RunResult } from './common';
import { loadFlow, unloadFlow, type FlowNode } from './nodered';
import { timeoutFor } from './scenarios';

export const PEERS_DIR = process.env.BENCH_PEERS_DIR ?? path.join(os.homedir(), '.cache', 'node-red-contrib-rabbitmq-retry', 'bench-peers');

export interface Peer {
  /** npm name and the exact version measured. */
  name: string;
  version: string;
  /** Key prefix of its figures in the bench's JSON line (`peer<Key>MsgPerSec`, …). */
  key: string;
  /** Where it comes from: installed from the registry, or built from source by hand (then optional). */
  origin: 'registry' | 'source';
  /** For a peer built from source: the directory it must be in (absent: the peer is skipped). */
  sourceDir?: string;
  /** How a flow acks with it. */
  ack: string;
  /** The node module(s) to load into Node-RED. */
  nodes(): unknown[];
  /** The amqplib version it consumes with. */
  amqplibVersion(): string;
  /** Wraps the peer's own amqplib copy so the bench's probe times its deliveries and acks. */
  probe(): void;
  /** consume `queue` with manual ack, prefetch `prefetch`: the flow and its credentials. */
  flow(url: string, queue: string, prefetch: number): { flow: FlowNode[]; credentials: Record<string, Record<string, string>> };
}

const moduleDir = (name: string): string => path.join(PEERS_DIR, 'node_modules', name);
const versionIn = (dir: string): string | undefined => {
  try {
    return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return undefined;
  }
};
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a peer's CommonJS modules, installed at bench time
const load = (file: string): unknown => require(file);

/** node-red-contrib-amqp-ack: "amqp in" with the server's prefetch on, then an "amqp ack" node (amqp-ts over amqplib 0.4). */
const amqpAck: Peer = {
  name: 'node-red-contrib-amqp-ack',
  version: '1.1.2',
  key: 'peerAmqpAck',
  origin: 'registry',
  ack: '"amqp ack" node',
  nodes: () => [load(path.join(moduleDir('node-red-contrib-amqp-ack'), 'lib/amqp.js'))],
  amqplibVersion: () => versionIn(moduleDir('amqplib')) ?? '?',
  probe: () => {
    const { Channel } = load(path.join(moduleDir('amqplib'), 'lib/callback_model.js')) as { Channel: { prototype: object } };
    installProbe(Object.create(Channel.prototype) as object);
  },
  flow: (url, queue, prefetch) => {
    const u = new URL(url);
    const server = {
      id: 'peer-server',
      type: 'amqp-server',
      host: u.hostname,
      port: u.port || '5672',
      vhost: decodeURIComponent(u.pathname.slice(1)),
      keepalive: '30',
      usetls: false,
      usetopology: false,
      prefetch: true,
      prefetchvalue: String(prefetch),
      prefetchack: false,
    };
    const common = { z: 'flow', iotype: '4', ioname: queue, server: 'peer-server', topic: '' };
    return {
      flow: [tab(), server, { id: 'peer-in', type: 'amqp in', ...common, wires: [['peer-ack']] }, { id: 'peer-ack', type: 'amqp ack', ...common, nack: false, wires: [[]] }],
      credentials: { 'peer-server': { user: decodeURIComponent(u.username || 'guest'), password: decodeURIComponent(u.password || 'guest') } },
    };
  },
};

const meowWolfDir = path.join(PEERS_DIR, 'from-source', 'meowwolf-node-red-contrib-amqp');

/**
 * @meowwolf/node-red-contrib-amqp (not on this registry mirror): "amqp-in-manual-ack", whose output is
 * wired back into its own input, which acks (amqplib 0.8, promise API). Built from its source.
 */
const meowWolf: Peer = {
  name: '@meowwolf/node-red-contrib-amqp',
  version: versionIn(meowWolfDir) ?? '?',
  key: 'peerMeowWolfAmqp',
  origin: 'source',
  sourceDir: meowWolfDir,
  ack: 'msg back into the manual-ack input',
  nodes: () => [load(path.join(meowWolfDir, 'build/nodes/amqp-broker.js')), load(path.join(meowWolfDir, 'build/nodes/amqp-in-manual-ack.js'))],
  amqplibVersion: () => versionIn(path.join(meowWolfDir, 'node_modules/amqplib')) ?? '?',
  probe: () => {
    const { Channel } = load(path.join(meowWolfDir, 'node_modules/amqplib/lib/channel_model.js')) as { Channel: { prototype: object } };
    installProbe(Object.create(Channel.prototype) as object);
  },
  flow: (url, queue, prefetch) => {
    const u = new URL(url);
    const broker = { id: 'peer-broker', type: 'amqp-broker', host: u.hostname, port: u.port || '5672', vhost: u.pathname.slice(1), tls: false, credsFromEnv: false };
    const consumer = {
      id: 'peer-in',
      type: 'amqp-in-manual-ack',
      z: 'flow',
      broker: 'peer-broker',
      prefetch: String(prefetch),
      noAck: false,
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
      wires: [['peer-in']],
    };
    return {
      flow: [tab(), broker, consumer],
      credentials: { 'peer-broker': { username: decodeURIComponent(u.username || 'guest'), password: decodeURIComponent(u.password || 'guest') } },
    };
  },
};

export const PEERS: Peer[] = [amqpAck, meowWolf];

/** Installs the peers (once; later runs reuse the cache directory) and wraps their amqplib copies. */
export function preparePeers(log: (text: string) => void): Peer[] {
  mkdirSync(PEERS_DIR, { recursive: true });
  const manifest = path.join(PEERS_DIR, 'package.json');
  if (!existsSync(manifest)) writeFileSync(manifest, `${JSON.stringify({ name: 'bench-peers', private: true }, null, 2)}\n`);
  const missing = PEERS.filter((p) => p.origin === 'registry' && versionIn(moduleDir(p.name)) !== p.version);
  if (missing.length > 0) {
    const specs = missing.map((p) => `${p.name}@${p.version}`);
    log(`   installing ${specs.join(', ')} into ${PEERS_DIR}`);
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', PEERS_DIR, ...specs], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const usable = PEERS.filter((p) => {
    if (p.origin === 'registry' || (p.sourceDir && existsSync(path.join(p.sourceDir, 'build')))) return true;
    log(`   ${p.name}: not on the registry mirror and not built from source in ${p.sourceDir ?? '?'}: skipped (docs/benchmark.md)`);
    return false;
  });
  for (const p of usable) p.probe();
  return usable;
}

/** One run: `count` messages preloaded on `queue`, consumed and acked through the peer's nodes. */
export async function peerConsume(peer: Peer, url: string, { queue, count, prefetch }: { queue: string; count: number; prefetch: number }): Promise<RunResult> {
  const { flow, credentials } = peer.flow(url, queue, prefetch);
  const done = armProbe(count);
  await loadFlow(flow, { nodes: peer.nodes(), credentials });
  try {
    await withTimeout(done, timeoutFor(count), `${peer.name}: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await unloadFlow();
  }
}
