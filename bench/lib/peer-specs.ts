/**
 * The other Node-RED AMQP packages the peers section measures (PEER_SPECS): each one's manual-ack flow,
 * and its install in a user directory of the bench's own.
 */
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { tab } from '../../test/helpers/flows';
import type { FlowNode } from './nodered';

const run = promisify(execFile);

export const PEERS_DIR = process.env.BENCH_PEERS_DIR ?? path.join(os.homedir(), '.cache', 'node-red-contrib-rabbitmq-retry', 'bench-peers');

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
export async function installPeer(spec: PeerSpec, log: (text: string) => void): Promise<{ userDir: string; version: string } | { skipped: string }> {
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
