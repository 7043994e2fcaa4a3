/**
 * Shared by the benchmark scripts: statistics, message bodies, the amqplib probe that times both
 * sides identically, and raw broker helpers (preload with confirms, run-scoped names, cleanup).
 * Broker access (URL, management API) comes from test/helpers/broker.ts.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import * as amqp from 'amqplib';
import type { ChannelModel, ConsumeMessage, Options } from 'amqplib';
import { AMQP_URL, management, vhostPath } from '../../test/helpers/broker';
import type { Names } from '../../test/helpers/flows';

export { AMQP_URL };

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function median(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(values: number[], p: number): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const rank = Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1));
  return v[rank]!;
}

export function round(x: number | undefined, digits = 0): number | null {
  if (x === undefined || !Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Full GC (the benchmark runs with --expose-gc), twice so weak/finalizable garbage goes too. */
export function fullGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === 'function') {
    gc();
    gc();
  }
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`timed out after ${Math.round(ms / 1000)} s waiting for ${what}`));
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export const errorText = (err: unknown): string => (err instanceof Error ? (err.stack ?? err.message) : String(err));

/** Runs a tool's main(): exit 0 when it resolves, 1 with the error on stderr when it throws. */
export function runTool(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${errorText(err)}\n`);
      process.exit(1);
    },
  );
}

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

/** One measured run. */
export interface RunResult {
  seconds: number;
  msgPerSec: number;
  cpuUsPerMsg: number;
  cpuPercent: number;
  brokerUsPerMsg: number;
  brokerCpuPercent: number;
}

// ---------------------------------------------------------------------------------------------
// Broker CPU: when the broker runs on this machine (the management API gives its os_pid and
// /proc/<pid>/stat is readable), its user+system CPU time is sampled around each measured run.

let brokerStat: string | undefined;
let clockTicks = 100;

/** Finds the broker's OS process; afterwards brokerCpuUs() works (else it returns NaN). */
export async function initBrokerCpu(): Promise<number | undefined> {
  try {
    const host = new URL(AMQP_URL).hostname;
    if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) return undefined;
    const nodes = (await (await management('GET', 'nodes?columns=name,os_pid')).json()) as Array<{ os_pid?: string }>;
    if (nodes.length !== 1) return undefined;
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
    brokerStat = `/proc/${String(nodes[0]?.os_pid)}/stat`;
    if (!Number.isFinite(brokerCpuUs())) brokerStat = undefined;
    return brokerStat ? Number(nodes[0]?.os_pid) : undefined;
  } catch {
    brokerStat = undefined;
    return undefined;
  }
}

/** The broker process's CPU time so far (µs, user + system), or NaN when unknown. */
export function brokerCpuUs(): number {
  if (!brokerStat) return NaN;
  try {
    const text = readFileSync(brokerStat, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // Fields 14 (utime) and 15 (stime) of proc(5); this slice starts at field 3.
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks;
  } catch {
    return NaN;
  }
}

// ---------------------------------------------------------------------------------------------
// The probe: amqplib's Channel.prototype.consume / ack / nack are wrapped once per amqplib copy, so
// the raw consumer, the package (which uses the same amqplib module instance) and a peer package
// (its own amqplib copy, wrapped the same way) are timed at exactly the same points: first delivery
// handed to the consumer callback → N-th message acked (a multiple-ack counts every delivery it
// settles).

interface ProbeState {
  deliveries: number;
  acks: number;
  nacks: number;
  target: number;
  t0: number;
  cpu0: NodeJS.CpuUsage | undefined;
  tEnd: number;
  cpuEnd: NodeJS.CpuUsage | undefined;
  broker0: number;
  brokerEnd: number;
  resolve: (() => void) | undefined;
  onDelivery: ((message: ConsumeMessage) => void) | undefined;
  onNack: ((message: ConsumeMessage) => void) | undefined;
}

type ProbeHooks = Pick<Partial<ProbeState>, 'onDelivery' | 'onNack'>;
const fresh = (target: number, hooks: ProbeHooks): ProbeState => ({
  deliveries: 0,
  acks: 0,
  nacks: 0,
  target,
  t0: 0,
  cpu0: undefined,
  tEnd: 0,
  cpuEnd: undefined,
  broker0: NaN,
  brokerEnd: NaN,
  resolve: undefined,
  onDelivery: hooks.onDelivery,
  onNack: hooks.onNack,
});
const state: ProbeState = fresh(Infinity, {});

function onDelivered(message: ConsumeMessage): void {
  state.deliveries += 1;
  if (state.deliveries === 1) {
    state.broker0 = brokerCpuUs();
    state.t0 = performance.now();
    state.cpu0 = process.cpuUsage();
  }
  if (state.onDelivery) state.onDelivery(message);
}

/** Unacked delivery tags per channel: a multiple-ack (`allUpTo`) settles every one up to its tag. */
const unacked = new WeakMap<object, Set<number>>();

function settled(channel: object, message: ConsumeMessage, allUpTo: boolean | undefined): number {
  const tags = unacked.get(channel);
  const tag = message.fields.deliveryTag;
  if (!tags) return 1;
  if (!allUpTo) return tags.delete(tag) ? 1 : 0;
  let n = 0;
  for (const t of tags) {
    if (t <= tag) {
      tags.delete(t);
      n += 1;
    }
  }
  return n;
}

function onAcked(count: number): void {
  if (count === 0) return;
  const before = state.acks;
  state.acks += count;
  if (before < state.target && state.acks >= state.target) {
    state.tEnd = performance.now();
    state.cpuEnd = process.cpuUsage(state.cpu0);
    state.brokerEnd = brokerCpuUs();
    const resolve = state.resolve;
    state.resolve = undefined;
    if (resolve) resolve();
  }
}

type Callback = (message: ConsumeMessage | null) => void;
interface ChannelMethods {
  consume(this: unknown, queue: string, callback: Callback, ...rest: unknown[]): unknown;
  ack(this: unknown, message: ConsumeMessage, allUpTo?: boolean): void;
  nack(this: unknown, message: ConsumeMessage, allUpTo?: boolean, requeue?: boolean): void;
}

const probed = new Set<object>();

/** Wraps the Channel class that defines consume/ack/nack, found from any channel object of that amqplib copy. */
export function installProbe(channel: object): void {
  let proto = Object.getPrototypeOf(channel) as object | null;
  // A ConfirmChannel's parent is the Channel class that defines consume/ack/nack.
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'ack')) proto = Object.getPrototypeOf(proto) as object | null;
  if (!proto) throw new Error('amqplib Channel.prototype.ack not found');
  if (probed.has(proto)) return;
  probed.add(proto);
  const methods = proto as ChannelMethods;
  // The originals are called with the channel as `this` (.call below).
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const { consume, ack, nack } = methods;
  // `...rest`: options, and the completion callback of amqplib's callback API (what amqp-ts uses).
  methods.consume = function probedConsume(queue, callback, ...rest) {
    let tags = unacked.get(this as object);
    if (!tags) {
      tags = new Set();
      unacked.set(this as object, tags);
    }
    const channelTags = tags;
    const probedCallback: Callback = (message) => {
      if (message) {
        channelTags.add(message.fields.deliveryTag);
        onDelivered(message);
      }
      callback(message);
    };
    return consume.call(this, queue, probedCallback, ...rest);
  };
  methods.ack = function probedAck(message, allUpTo) {
    ack.call(this, message, allUpTo);
    onAcked(settled(this as object, message, allUpTo));
  };
  methods.nack = function probedNack(message, allUpTo, requeue) {
    nack.call(this, message, allUpTo, requeue);
    state.nacks += settled(this as object, message, allUpTo);
    if (state.onNack) state.onNack(message);
  };
}

/** Resets the counters; the promise resolves at the `target`-th ack. */
export function armProbe(target: number, hooks: ProbeHooks = {}): Promise<void> {
  Object.assign(state, fresh(target, hooks));
  return new Promise((resolve) => {
    state.resolve = resolve;
  });
}

export function probeCounts(): { deliveries: number; acks: number; nacks: number } {
  return { deliveries: state.deliveries, acks: state.acks, nacks: state.nacks };
}

/** Throughput and CPU of the armed window: first delivery → target-th ack. */
export function probeResult(): RunResult {
  const seconds = (state.tEnd - state.t0) / 1000;
  const cpu = state.cpuEnd ? state.cpuEnd.user + state.cpuEnd.system : NaN;
  const broker = state.brokerEnd - state.broker0;
  return {
    seconds,
    msgPerSec: state.target / seconds,
    cpuUsPerMsg: cpu / state.target,
    cpuPercent: (cpu / 1e6 / seconds) * 100,
    brokerUsPerMsg: broker / state.target,
    brokerCpuPercent: (broker / 1e6 / seconds) * 100,
  };
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
