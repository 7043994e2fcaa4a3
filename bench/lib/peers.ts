/**
 * Other Node-RED AMQP packages with manual ack, run in the same Node-RED runtime, on the same broker,
 * with the same messages as this package. They are installed at bench time from the npm registry
 * into a cache directory outside the repository (BENCH_PEERS_DIR), never committed.
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

export const PEERS: Peer[] = [amqpAck];

/** Installs the peers (once; later runs reuse the cache directory) and wraps their amqplib copies. */
export function preparePeers(log: (text: string) => void): Peer[] {
  mkdirSync(PEERS_DIR, { recursive: true });
  const manifest = path.join(PEERS_DIR, 'package.json');
  if (!existsSync(manifest)) writeFileSync(manifest, `${JSON.stringify({ name: 'bench-peers', private: true }, null, 2)}\n`);
  const missing = PEERS.filter((p) => versionIn(moduleDir(p.name)) !== p.version);
  if (missing.length > 0) {
    const specs = missing.map((p) => `${p.name}@${p.version}`);
    log(`   installing ${specs.join(', ')} into ${PEERS_DIR}`);
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', PEERS_DIR, ...specs], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  for (const p of PEERS) p.probe();
  return PEERS;
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
