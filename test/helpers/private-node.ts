/**
 * A private RabbitMQ node (scripts/rabbitmq-node.sh) for a test that hurts its broker. Its name and
 * ports are this test process's own, so two runs of the suite at once (CI legs, engineers sharing a
 * machine) never stop or reset each other's node.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const SCRIPT = path.resolve(__dirname, '../../scripts/rabbitmq-node.sh');

export interface PrivateNode {
  name: string;
  /** AMQP port. */
  port: number;
  url: string;
  management: string;
  /** rabbitmqctl against this node, e.g. `ctl('set_vm_memory_high_watermark', '0.000001')`. */
  ctl(...args: string[]): Promise<void>;
  /** Stops the node (the whole Erlang VM); its data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and waits until it answers. */
  start(): Promise<void>;
  /** Stops the node and deletes its data. */
  reset(): void;
}

/** Why a test that needs a private node is skipped without one. */
export const NO_PRIVATE_NODE = 'needs the installed rabbitmq-server (/usr/lib/rabbitmq/bin) for a private broker node: sudo apt-get install rabbitmq-server';

/** Whether this machine has the rabbitmq-server a private node runs on. */
export function canStartPrivateNode(): boolean {
  return existsSync('/usr/lib/rabbitmq/bin/rabbitmq-server');
}

/** Ports nobody listens on now, all held open together so they differ. */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((s) => {
      const address = s.address();
      return typeof address === 'object' && address ? address.port : 0;
    });
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}

/**
 * Starts a node named `<prefix>-<pid>` on free ports (AMQP, management, Erlang distribution);
 * `extraConf`: rabbitmq.conf lines of its own (e.g. `max_message_size = 4096`); `plugins`: more plugins to enable.
 */
export async function startPrivateNode(prefix: string, options: { extraConf?: string; plugins?: string[] } = {}): Promise<PrivateNode> {
  const [amqpPort, managementPort, distPort] = await freePorts(3);
  const name = `${prefix}-${process.pid}`;
  const env: NodeJS.ProcessEnv = { ...process.env, RABBITMQ_NODE_DIST_PORT: String(distPort) };
  if (options.extraConf !== undefined) env.RABBITMQ_NODE_EXTRA_CONF = options.extraConf;
  if (options.plugins !== undefined) env.RABBITMQ_NODE_PLUGINS = options.plugins.join(',');
  const startArgs = ['start', name, String(amqpPort), String(managementPort)];
  execFileSync(SCRIPT, startArgs, { env, stdio: 'ignore' });
  return {
    name,
    port: Number(amqpPort),
    ctl: async (...args) => {
      await promisify(execFile)(SCRIPT, ['ctl', name, ...args]);
    },
    url: `amqp://guest:guest@127.0.0.1:${amqpPort}`,
    management: `http://127.0.0.1:${managementPort}`,
    stop: async () => {
      await promisify(execFile)(SCRIPT, ['stop', name], { env });
    },
    start: async () => {
      await promisify(execFile)(SCRIPT, startArgs, { env });
    },
    reset: () => execFileSync(SCRIPT, ['reset', name], { stdio: 'ignore' }),
  };
}
