/**
 * The fault suite's own RabbitMQ node (scripts/rabbitmq-node.sh), so the suite may stop, restart and
 * alarm it: `faults-<pid>`, on AMQP 5691 / management 15691 / distribution 25691 when those are free,
 * else on free ports — two runs at once (CI, an engineer) never stop or reset each other's node.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import * as amqp from 'amqplib';
import { script } from '../helpers/private-broker';
import { freePorts } from '../helpers/private-node';

const run = promisify(execFile);
const NODE_SCRIPT = path.resolve(__dirname, '../../scripts/rabbitmq-node.sh');

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls (every 250 ms) until the condition holds; throws after the limit. Never a timing assertion. */
export async function waitUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(250);
  }
}

/** scripts/rabbitmq-node.sh with these arguments; its output. */
export async function nodeScript(...args: string[]): Promise<string> {
  try {
    return (await run('bash', [NODE_SCRIPT, ...args], { timeout: 180_000, env: { ...process.env, RABBITMQ_NODE_DIST_PORT: String(ports.dist) } })).stdout;
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`scripts/rabbitmq-node.sh ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
  }
}

/** Resolves once a client can open a connection to `url` again. */
export async function acceptingConnections(url: string, timeoutMs = 120_000): Promise<void> {
  await waitUntil(async () => {
    const connection = await amqp.connect(url);
    connection.on('error', () => undefined);
    await connection.close();
    return true;
  }, `the broker at ${url} to accept connections`, timeoutMs);
}

export type BrokerKind = 'single' | 'cluster';

export interface BrokerNode {
  kind: BrokerKind;
  /** For the suite's own short connections (set-up, draining). */
  url: string;
  /** What the producer tries, in turn. */
  urls: string[];
  /** AMQP_URL as the deployed flow's broker config reads it. */
  nodeRedUrl: string;
  /** The management HTTP API of the node Node-RED is connected to. */
  managementUrl: string;
  /** rabbitmqctl on the node Node-RED is connected to. */
  ctl(...args: string[]): Promise<string>;
  /** Stops the node Node-RED is connected to (the whole Erlang VM). */
  stopNode(): Promise<void>;
  /** Starts it again and waits until it accepts connections. */
  startNode(): Promise<void>;
  /** The cluster's name and node 1's AMQP port (scripts/rabbitmq-cluster.sh), to reach each node (cluster-broker.ts). */
  cluster?: { name: string; firstPort: number };
}

let NAME = `faults-${process.pid}`;
/** The suite's ports; `choosePorts` replaces them with free ones when another process holds them. */
const ports = { amqp: 5691, management: 15691, dist: 25691 };

/**
 * Another user of this module (the soak, test/soak) names its node and prefers ports of its own
 * (AMQP, management +10000, distribution +20000), so it never takes the fault suite's when both run.
 * Call before the first `brokerNode('single')`.
 */
export function useOwnNode(prefix: string, amqpPort: number): void {
  NAME = `${prefix}-${process.pid}`;
  Object.assign(ports, { amqp: amqpPort, management: amqpPort + 10_000, dist: amqpPort + 20_000 });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function choosePorts(): Promise<void> {
  const wanted = [ports.amqp, ports.management, ports.dist];
  if ((await Promise.all(wanted.map(portFree))).every(Boolean)) return;
  const [amqpPort, management, dist] = await freePorts(3);
  Object.assign(ports, { amqp: amqpPort, management, dist });
}

function single(): BrokerNode {
  const url = `amqp://guest:guest@127.0.0.1:${ports.amqp}`;
  const start = async (): Promise<void> => {
    await nodeScript('start', NAME, String(ports.amqp), String(ports.management));
    await acceptingConnections(url);
  };
  return {
    kind: 'single',
    url,
    urls: [url],
    nodeRedUrl: url,
    managementUrl: `http://127.0.0.1:${ports.management}`,
    ctl: (...args) => nodeScript('ctl', NAME, ...args),
    stopNode: async () => {
      await nodeScript('stop', NAME);
    },
    startNode: start,
  };
}

/** The cluster's name and first AMQP port: node i on FIRST+i-1, management +10000, distribution +20000. */
const CLUSTER = `faults-${process.pid}-c`;
const cluster_ = { first: 5695 };

/** 5695-5697 (and +10000, +20000) when free, else the first of a few other bases that is. */
async function chooseClusterPorts(): Promise<void> {
  for (const first of [5695, 5795, 5895, 5995, 6095]) {
    const wanted = [0, 1, 2].flatMap((i) => [first + i, first + i + 10_000, first + i + 20_000]);
    if ((await Promise.all(wanted.map(portFree))).every(Boolean)) {
      cluster_.first = first;
      return;
    }
  }
  throw new Error('no free ports for the fault suite\'s cluster (tried 5695, 5795, 5895, 5995, 6095 and +10000, +20000)');
}

/**
 * A 3-node cluster (scripts/rabbitmq-cluster.sh). Node-RED gets the three URLs and connects to the
 * first, node 1 — the one the fault stops, and the leader of the quorum queues its connection
 * declares. The suite's own connections and the producer prefer node 3, which stays up.
 */
function cluster(): BrokerNode {
  const port = (i: number): number => cluster_.first + i - 1;
  const url = (i: number): string => `amqp://guest:guest@127.0.0.1:${port(i)}`;
  return {
    kind: 'cluster',
    cluster: { name: CLUSTER, firstPort: cluster_.first },
    url: url(3),
    urls: [url(3), url(2), url(1)],
    nodeRedUrl: [url(1), url(2), url(3)].join(', '),
    managementUrl: `http://127.0.0.1:${port(1) + 10_000}`,
    ctl: (...args) => script('rabbitmq-node.sh', ['ctl', `${CLUSTER}-1`, ...args]),
    stopNode: async () => {
      await script('rabbitmq-node.sh', ['stop', `${CLUSTER}-1`]);
    },
    startNode: async () => {
      // A restarted node rejoins the cluster from its data.
      await script('rabbitmq-node.sh', ['start', `${CLUSTER}-1`, String(port(1)), String(port(1) + 10_000)]);
      await acceptingConnections(url(1));
    },
  };
}

const started = new Map<BrokerKind, Promise<BrokerNode>>();

/** The broker of that kind, started fresh (data reset) the first time it is asked for. */
export function brokerNode(kind: BrokerKind): Promise<BrokerNode> {
  let node = started.get(kind);
  if (!node) {
    node = (async () => {
      if (kind === 'cluster') {
        await chooseClusterPorts();
        await script('rabbitmq-cluster.sh', ['up', CLUSTER, String(cluster_.first)]);
        return cluster();
      }
      await choosePorts();
      const broker = single();
      await broker.startNode();
      return broker;
    })();
    started.set(kind, node);
  }
  return node;
}

/** Stops every node the suite started and deletes its data. */
export async function resetBrokerNodes(): Promise<void> {
  if (started.has('single')) await nodeScript('reset', NAME);
  if (started.has('cluster')) await script('rabbitmq-cluster.sh', ['down', CLUSTER]);
  started.clear();
}
