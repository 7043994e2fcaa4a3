/**
 * Shared by the benchmark scripts: statistics, message bodies, the amqplib probe that times both
 * sides identically (probe.cjs), and raw broker helpers (preload with confirms, run-scoped names, cleanup).
 * Broker access (URL, management API) comes from test/helpers/broker.ts.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import * as amqp from 'amqplib';
import type { ChannelModel, Options } from 'amqplib';
import { AMQP_URL, management, vhostPath } from '../../test/helpers/broker';
import type { Names } from '../../test/helpers/flows';
import { errorText, sleep } from './basics';
import { setBrokerProcess } from './probe.cjs';

export { AMQP_URL };
export * from './basics';

export interface Body {
  type: string;
  id: string;
  amount: number;
  currency: string;
  createdAt: string;
  customer: Record<string, string>;
  items: Array<{ sku: string; qty: number; price: number; note: string }>;
}

/** A JSON business message of about `bytes` bytes (a payment with line items). */
export function makeBody(bytes: number): Body {
  const body: Body = {
    type: 'payment',
    id: 'pay-4f1c2a9e-7d3b-4c61-9a0e-1b2c3d4e5f60',
    amount: 10.23,
    currency: 'EUR',
    createdAt: '2024-05-01T12:00:00.000Z',
    customer: { id: 'cust-000123', name: 'Ada Lovelace', email: 'ada@example.org', country: 'GB' },
    items: [],
  };
  let i = 0;
  while (JSON.stringify(body).length < bytes - 90) {
    body.items.push({ sku: `SKU-${String(i).padStart(6, '0')}`, qty: (i % 5) + 1, price: 19.99, note: 'bench line item' });
    i += 1;
  }
  return body;
}

/** Properties every preloaded message carries (the same for raw and package consumers). */
export function messageProperties(i: number): Options.Publish {
  return {
    contentType: 'application/json',
    deliveryMode: 1,
    messageId: `m-${i}`,
    correlationId: `c-${i}`,
    timestamp: Math.floor(Date.now() / 1000),
    headers: { source: 'bench' },
  };
}

/**
 * The options of a raw publish with what retry-publish gives each of its own (src/nodes/shared/
 * publish-options.ts): JSON content type, a UUID messageId, a timestamp, persistent, mandatory.
 */
function rawPublishOptions(): Options.Publish {
  return { contentType: 'application/json', messageId: randomUUID(), timestamp: Math.floor(Date.now() / 1000), persistent: true, mandatory: true };
}

/**
 * The raw publisher of the publish pair: a ConfirmChannel on `model` (its errors left to the
 * confirms), each publish the payload JSON-encoded per message to `queue` with rawPublishOptions();
 * `returned()` counts the publishes the broker returned unroutable.
 */
export async function rawJsonPublisher(model: ChannelModel, queue: string): Promise<{ publish(payload: unknown, confirmed: (err: unknown) => void): void; returned(): number }> {
  const ch = await model.createConfirmChannel();
  ch.on('error', () => undefined);
  let returned = 0;
  ch.on('return', () => {
    returned += 1;
  });
  return {
    publish: (payload, confirmed) => {
      ch.publish('', queue, Buffer.from(JSON.stringify(payload), 'utf8'), rawPublishOptions(), confirmed);
    },
    returned: () => returned,
  };
}

// ---------------------------------------------------------------------------------------------
// The probe (probe.cjs): amqplib's Channel.prototype consume/ack/nack wrapped once per amqplib copy,
// so raw amqplib, the package (same amqplib instance) and other packages are timed at the same
// points. The same file is preloaded into the child processes of the peers section.

export { armProbe, brokerCpuUs, installProbe, probeCounts, probeResult } from './probe.cjs';
export type { RunResult } from './probe.cjs';

/**
 * Finds the broker's OS process (management API; the broker must run on this machine), so that
 * brokerCpuUs() works here and in child processes (childProbeEnv). Returns its pid, or undefined.
 */
export async function initBrokerCpu(): Promise<number | undefined> {
  try {
    const host = new URL(AMQP_URL).hostname;
    if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) return undefined;
    const nodes = (await (await management('GET', 'nodes?columns=name,os_pid')).json()) as Array<{ os_pid?: string }>;
    if (nodes.length !== 1) return undefined;
    let clockTicks = 100;
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
    const pid = Number(nodes[0]?.os_pid);
    return pid > 0 && setBrokerProcess(pid, clockTicks) ? pid : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Raw broker access for the benchmark itself.

export async function connect(name = 'bench'): Promise<ChannelModel> {
  const model = await amqp.connect(AMQP_URL, { clientProperties: { connection_name: name } });
  model.on('error', () => undefined);
  return model;
}

/**
 * Publishes `count` messages to a queue through the default exchange on a confirm channel, up to
 * `window` unconfirmed, and waits for every confirm. `props(i)` gives each message's properties.
 */
export async function preload(model: ChannelModel, queue: string, count: number, content: Buffer, props = messageProperties, window = 2000): Promise<void> {
  const ch = await model.createConfirmChannel();
  ch.on('error', () => undefined);
  let inFlight = 0;
  let wake: (() => void) | undefined;
  let failure: unknown;
  const confirmed = (err: unknown): void => {
    inFlight -= 1;
    if (err) failure ??= err;
    if (wake && inFlight <= window / 2) {
      const w = wake;
      wake = undefined;
      w();
    }
  };
  for (let i = 0; i < count; i += 1) {
    if (inFlight >= window) {
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    inFlight += 1;
    const ok = ch.sendToQueue(queue, content, props(i), confirmed);
    if (!ok) await once(ch, 'drain');
  }
  await ch.waitForConfirms();
  await ch.close().catch(() => undefined);
  if (failure) throw new Error(`preload of ${queue} failed: ${errorText(failure)}`);
}

/** Names this run creates: one random prefix, everything deleted at the end. */
export class NameBook {
  readonly prefix: string;
  private readonly queues = new Set<string>();

  constructor(tag = 'bench') {
    this.prefix = `${tag}-${randomBytes(4).toString('hex')}`;
  }

  queue(suffix: string): string {
    const name = `${this.prefix}.${suffix}`;
    this.queues.add(name);
    return name;
  }

  /** The names of one retry topology on the default exchange (test/helpers/flows.ts's Names). */
  topology(suffix: string): Names {
    return { mainExchange: '', mainQueue: this.queue(suffix), retryExchange: '', retryQueue: this.queue(`${suffix}.retry`), parkingQueue: this.queue(`${suffix}.parking`), routingKey: '' };
  }

  /**
   * Deletes every queue this run named, then (management API, best effort) any other queue with the
   * run's prefix, e.g. retry tiers the package derived from a name.
   */
  async cleanup(): Promise<string[]> {
    const deleted: string[] = [];
    let model: ChannelModel | undefined;
    try {
      model = await connect('bench cleanup');
      for (const q of this.queues) {
        const ch = await model.createChannel();
        ch.on('error', () => undefined);
        try {
          await ch.deleteQueue(q);
          deleted.push(q);
          await ch.close();
        } catch {
          // Already gone (a 404 closes the channel): nothing to delete.
        }
      }
    } catch (err) {
      process.stderr.write(`bench cleanup: ${errorText(err)}\n`);
    } finally {
      if (model) await model.close().catch(() => undefined);
    }
    try {
      const list = (await (await management('GET', `queues/${vhostPath()}?columns=name`)).json()) as Array<{ name: string }>;
      for (const { name } of list) {
        if (name.startsWith(`${this.prefix}.`)) {
          await management('DELETE', `queues/${vhostPath()}/${encodeURIComponent(name)}`);
          deleted.push(name);
        }
      }
    } catch {
      // No management API: the named queues above were deleted over AMQP.
    }
    return deleted;
  }
}

/** Waits until a queue holds exactly `count` messages (or throws after `timeoutMs`). */
export async function waitForCount(model: ChannelModel, queue: string, count: number, timeoutMs = 30_000): Promise<void> {
  const ch = await model.createChannel();
  ch.on('error', () => undefined);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const { messageCount } = await ch.checkQueue(queue);
      if (messageCount === count) return;
      if (Date.now() > deadline) throw new Error(`queue ${queue} holds ${messageCount} messages, expected ${count}`);
      await sleep(20);
    }
  } finally {
    await ch.close().catch(() => undefined);
  }
}

export async function purge(model: ChannelModel, queue: string): Promise<void> {
  const ch = await model.createChannel();
  ch.on('error', () => undefined);
  try {
    await ch.purgeQueue(queue);
  } finally {
    await ch.close().catch(() => undefined);
  }
}
