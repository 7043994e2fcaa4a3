/** Real-broker helpers for integration tests: unique names, an admin channel, polling, cleanup. */
import { randomBytes } from 'node:crypto';
import * as amqp from 'amqplib';
import type { Channel, ChannelModel, GetMessage } from 'amqplib';
import { managementEndpoint } from '../../src/lib/topology';
import { serviceUrls } from '../../scripts/services.mjs';

const urls = serviceUrls(process.env);

/** The broker (AMQP_URL). */
export const AMQP_URL = urls.amqp;

/** Management API of the same broker (RABBITMQ_MANAGEMENT_URL; `npm test` enables it on a local broker), for "created by another tool" setups. */
export const MANAGEMENT_URL = urls.management;

/** A name no other test (or earlier run) uses. */
export function uniqueName(prefix: string): string {
  return `test-${prefix}-${randomBytes(4).toString('hex')}`;
}

export class Broker {
  private constructor(
    readonly model: ChannelModel,
    private channel: Channel,
  ) {}

  private readonly queues = new Set<string>();
  private readonly exchanges = new Set<string>();

  /** The shared broker at AMQP_URL, or another (e.g. a private node a test may hurt). */
  static async open(url = AMQP_URL): Promise<Broker> {
    const model = await amqp.connect(url);
    model.on('error', () => undefined);
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    return new Broker(model, channel);
  }

  /** A working channel: 404/406 close channels, so a fresh one is opened when needed. */
  async ch(): Promise<Channel> {
    try {
      await this.channel.checkExchange('amq.direct');
    } catch {
      this.channel = await this.model.createChannel();
      this.channel.on('error', () => undefined);
    }
    return this.channel;
  }

  /** Remembers names to delete in cleanup(), whoever creates them. */
  track(kind: 'queue' | 'exchange', ...names: string[]): void {
    for (const n of names) (kind === 'queue' ? this.queues : this.exchanges).add(n);
  }

  async publish(exchange: string, routingKey: string, body: unknown, options: amqp.Options.Publish = {}): Promise<void> {
    const confirm = await this.model.createConfirmChannel();
    confirm.on('error', () => undefined);
    const content = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    confirm.publish(exchange, routingKey, content, { contentType: 'application/json', persistent: true, ...options });
    await confirm.waitForConfirms();
    await confirm.close();
  }

  async messageCount(queue: string): Promise<number> {
    return (await (await this.ch()).checkQueue(queue)).messageCount;
  }

  async exists(kind: 'queue' | 'exchange', name: string): Promise<boolean> {
    const ch = await this.model.createChannel();
    ch.on('error', () => undefined);
    try {
      if (kind === 'queue') await ch.checkQueue(name);
      else await ch.checkExchange(name);
      await ch.close();
      return true;
    } catch {
      return false;
    }
  }

  /** Consumers on a queue; 0 when the queue does not exist (yet). */
  async consumerCount(queue: string): Promise<number> {
    if (!(await this.exists('queue', queue))) return 0;
    return (await (await this.ch()).checkQueue(queue)).consumerCount;
  }

  /** Waits until the queue exists and exactly one consumer reads it. */
  async waitForConsumer(queue: string): Promise<void> {
    await waitFor(async () => (await this.consumerCount(queue)) === 1, `a consumer on ${queue}`);
  }

  /** Takes one message off a queue (acked), waiting until there is one. */
  async take(queue: string, timeoutMs = 30_000): Promise<GetMessage> {
    let found: GetMessage | undefined;
    await waitFor(async () => {
      const m = await (await this.ch()).get(queue, { noAck: true });
      if (m) found = m;
      return m !== false;
    }, `a message in ${queue}`, timeoutMs);
    return found!;
  }

  /** All messages now in a queue, taken off it (acked). */
  async drain(queue: string): Promise<GetMessage[]> {
    const out: GetMessage[] = [];
    for (;;) {
      const m = await (await this.ch()).get(queue, { noAck: true });
      if (m === false) return out;
      out.push(m);
    }
  }

  async cleanup(): Promise<void> {
    const ch = await this.ch();
    for (const q of this.queues) await ch.deleteQueue(q).catch(() => undefined);
    for (const x of this.exchanges) await ch.deleteExchange(x).catch(() => undefined);
    this.queues.clear();
    this.exchanges.clear();
    await this.model.close().catch(() => undefined);
  }
}

/** Polls until the condition holds; fails with a description after the (generous) limit. No timing assertion. */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A request to a management HTTP API (RABBITMQ_MANAGEMENT_URL unless another is given): a user:password
 * in its URL is used (as the package's ManagementApi does: fetch refuses such a URL), else AMQP_URL's, else guest.
 */
export async function managementFetch(path: string, init: RequestInit = {}, baseUrl = MANAGEMENT_URL): Promise<Response> {
  const amqpUrl = new URL(AMQP_URL);
  const endpoint = managementEndpoint(baseUrl, decodeURIComponent(amqpUrl.username) || 'guest', decodeURIComponent(amqpUrl.password) || 'guest');
  const headers = new Headers(init.headers);
  headers.set('authorization', endpoint.authorization);
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  return fetch(`${endpoint.baseUrl}/api/${path}`, { ...init, headers });
}

/** Calls the management HTTP API (see managementFetch for the credentials); fails on an answer other than 2xx or 404. */
export async function management(method: string, path: string, body?: unknown): Promise<Response> {
  const init: RequestInit = { method };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await managementFetch(path, init);
  if (!response.ok && response.status !== 404) throw new Error(`management ${method} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

export const vhostPath = (): string => encodeURIComponent(decodeURIComponent(new URL(AMQP_URL).pathname.slice(1)) || '/');

/** Has the broker close every connection with this client-given name (management API; its list lags a few seconds). */
export async function closeConnectionsNamed(connectionName: string): Promise<void> {
  let names: string[] = [];
  await waitFor(async () => {
    const list = (await (await management('GET', 'connections?columns=name,client_properties')).json()) as Array<{ name: string; client_properties?: { connection_name?: string } }>;
    names = list.filter((c) => c.client_properties?.connection_name === connectionName).map((c) => c.name);
    return names.length > 0;
  }, `the broker to list connection '${connectionName}'`);
  for (const name of names) await management('DELETE', `connections/${encodeURIComponent(name)}`);
}
