/**
 * RabbitMQ nodes a test starts for itself (scripts/rabbitmq-node.sh, scripts/rabbitmq-cluster.sh): it
 * may stop them, give them TLS or cluster them without touching the shared brokers.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const scripts = path.resolve(__dirname, '../../scripts');
const run = promisify(execFile);

/** Runs scripts/<script> with the arguments; its stdout. Fails with its stderr. */
export async function script(name: 'rabbitmq-node.sh' | 'rabbitmq-cluster.sh', args: string[], env: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout } = await run('bash', [path.join(scripts, name), ...args], { env: { ...process.env, ...env }, timeout: 180_000 });
    return stdout;
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`${name} ${args.join(' ')} failed: ${e.stderr ?? e.message}`, { cause: err });
  }
}
