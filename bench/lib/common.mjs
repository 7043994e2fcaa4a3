/**
 * Shared by the benchmark scripts: statistics, message bodies, the amqplib probe that times both
 * sides identically, and raw broker helpers (preload with confirms, unique names, cleanup).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
export const amqp = require('amqplib');

export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const MANAGEMENT_URL = process.env.AMQP_MANAGEMENT_URL ?? `http://${new URL(AMQP_URL).hostname}:15672`;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(values, p) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const rank = Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1));
  return v[rank];
}

export function round(x, digits = 0) {
  if (!Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Full GC (the benchmark runs with --expose-gc), twice so weak/finalizable garbage goes too. */
export function fullGc() {
  const gc = globalThis.gc;
  if (typeof gc === 'function') {
    gc();
    gc();
  }
}

export async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_resolve, reject) => {
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

/** A JSON business message of about `bytes` bytes (a payment with line items). */
export function makeBody(bytes) {
  const body = {
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
export function messageProperties(i) {
  return {
    contentType: 'application/json',
    deliveryMode: 1,
    messageId: `m-${i}`,
    correlationId: `c-${i}`,
    timestamp: Math.floor(Date.now() / 1000),
    headers: { source: 'bench' },
  };
}

// ---------------------------------------------------------------------------------------------
// Broker CPU: when the broker runs on this machine (the management API gives its os_pid and
// /proc/<pid>/stat is readable), its user+system CPU time is sampled around each measured run.

let brokerStat;
let clockTicks = 100;

/** Finds the broker's OS process; afterwards brokerCpuUs() works (else it returns NaN). */
export async function initBrokerCpu() {
  try {
    const host = new URL(AMQP_URL).hostname;
    if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) return undefined;
    const url = new URL(AMQP_URL);
    const auth = Buffer.from(`${decodeURIComponent(url.username || 'guest')}:${decodeURIComponent(url.password || 'guest')}`).toString('base64');
    const response = await fetch(`${MANAGEMENT_URL}/api/nodes?columns=name,os_pid`, { headers: { authorization: `Basic ${auth}` }, signal: AbortSignal.timeout(5000) });
    if (!response.ok) return undefined;
    const nodes = await response.json();
    if (nodes.length !== 1) return undefined;
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
    brokerStat = `/proc/${nodes[0].os_pid}/stat`;
    if (!Number.isFinite(brokerCpuUs())) brokerStat = undefined;
    return brokerStat ? Number(nodes[0].os_pid) : undefined;
  } catch {
    brokerStat = undefined;
    return undefined;
  }
}

/** The broker process's CPU time so far (µs, user + system), or NaN when unknown. */
export function brokerCpuUs() {
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
// The probe: amqplib's Channel.prototype.consume / ack / nack are wrapped once, so the raw consumer
// and the package (which uses the same amqplib module instance) are timed at exactly the same
// points: first delivery handed to the consumer callback → N-th ack written to the socket.

const state = {
  deliveries: 0,
  acks: 0,
  nacks: 0,
  target: Infinity,
  t0: 0,
  cpu0: undefined,
  tEnd: 0,
  cpuEnd: undefined,
  broker0: NaN,
  brokerEnd: NaN,
  resolve: undefined,
  onDelivery: undefined,
  onNack: undefined,
};

let probeInstalled = false;

function onDelivered(message) {
  state.deliveries += 1;
  if (state.deliveries === 1) {
    state.broker0 = brokerCpuUs();
    state.t0 = performance.now();
    state.cpu0 = process.cpuUsage();
  }
  if (state.onDelivery) state.onDelivery(message);
}

function onAcked() {
  state.acks += 1;
  if (state.acks === state.target) {
    state.tEnd = performance.now();
    state.cpuEnd = process.cpuUsage(state.cpu0);
    state.brokerEnd = brokerCpuUs();
    const resolve = state.resolve;
    state.resolve = undefined;
    if (resolve) resolve();
  }
}

/** Wraps amqplib's Channel.prototype (the same class the package's channels are). */
export function installProbe(channel) {
  if (probeInstalled) return;
  probeInstalled = true;
  let proto = Object.getPrototypeOf(channel);
  // A ConfirmChannel's parent is the Channel class that defines consume/ack/nack.
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'ack')) proto = Object.getPrototypeOf(proto);
  if (!proto) throw new Error('amqplib Channel.prototype.ack not found');
  const { consume, ack, nack } = proto;
  proto.consume = function probedConsume(queue, callback, options) {
    return consume.call(
      this,
      queue,
      (message) => {
        if (message) onDelivered(message);
        callback(message);
      },
      options,
    );
  };
  proto.ack = function probedAck(message, allUpTo) {
    ack.call(this, message, allUpTo);
    onAcked();
  };
  proto.nack = function probedNack(message, allUpTo, requeue) {
    nack.call(this, message, allUpTo, requeue);
    state.nacks += 1;
    if (state.onNack) state.onNack(message);
  };
}

/** Resets the counters; the promise resolves at the `target`-th ack. */
export function armProbe(target, hooks = {}) {
  Object.assign(state, {
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
    onDelivery: hooks.onDelivery,
    onNack: hooks.onNack,
  });
  return new Promise((resolve) => {
    state.resolve = resolve;
  });
}

export function probeCounts() {
  return { deliveries: state.deliveries, acks: state.acks, nacks: state.nacks };
}

/** Throughput and CPU of the armed window: first delivery → target-th ack. */
export function probeResult() {
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

export async function connect(name = 'bench') {
  const model = await amqp.connect(AMQP_URL, { clientProperties: { connection_name: name } });
  model.on('error', () => undefined);
  return model;
}

/**
 * Publishes `count` messages to a queue through the default exchange on a confirm channel, up to
 * `window` unconfirmed, and waits for every confirm. `props(i)` gives each message's properties.
 */
export async function preload(model, queue, count, content, props = messageProperties, window = 2000) {
  const ch = await model.createConfirmChannel();
  ch.on('error', () => undefined);
  let inFlight = 0;
  let wake;
  let failure;
  const confirmed = (err) => {
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
      await new Promise((resolve) => {
        wake = resolve;
      });
    }
    inFlight += 1;
    const ok = ch.sendToQueue(queue, content, props(i), confirmed);
    if (!ok) await once(ch, 'drain');
  }
  await ch.waitForConfirms();
  await ch.close().catch(() => undefined);
  if (failure) throw new Error(`preload of ${queue} failed: ${String(failure)}`);
}

/** Names this run creates: one random prefix, everything deleted at the end. */
export class NameBook {
  constructor(tag = 'bench') {
    this.prefix = `${tag}-${randomBytes(4).toString('hex')}`;
    this.queues = new Set();
  }

  queue(suffix) {
    const name = `${this.prefix}.${suffix}`;
    this.queues.add(name);
    return name;
  }

  /** The main / retry / parking names of one retry topology. */
  topology(suffix) {
    return { mainQueue: this.queue(suffix), retryQueue: this.queue(`${suffix}.retry`), parkingQueue: this.queue(`${suffix}.parking`) };
  }

  /**
   * Deletes every queue this run named, then (management API, best effort) any other queue with the
   * run's prefix, e.g. retry tiers the package derived from a name.
   */
  async cleanup() {
    const deleted = [];
    let model;
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
      process.stderr.write(`bench cleanup: ${err.message}\n`);
    } finally {
      if (model) await model.close().catch(() => undefined);
    }
    try {
      const url = new URL(AMQP_URL);
      const vhost = encodeURIComponent(decodeURIComponent(url.pathname.slice(1)) || '/');
      const auth = Buffer.from(`${decodeURIComponent(url.username || 'guest')}:${decodeURIComponent(url.password || 'guest')}`).toString('base64');
      const headers = { authorization: `Basic ${auth}` };
      const response = await fetch(`${MANAGEMENT_URL}/api/queues/${vhost}?columns=name`, { headers, signal: AbortSignal.timeout(5000) });
      if (response.ok) {
        const list = await response.json();
        for (const { name } of list) {
          if (name.startsWith(`${this.prefix}.`)) {
            await fetch(`${MANAGEMENT_URL}/api/queues/${vhost}/${encodeURIComponent(name)}`, { method: 'DELETE', headers, signal: AbortSignal.timeout(5000) });
            deleted.push(name);
          }
        }
      }
    } catch {
      // No management API: the named queues above were deleted over AMQP.
    }
    return deleted;
  }
}

/** Waits until a queue holds exactly `count` messages (or throws after `timeoutMs`). */
export async function waitForCount(model, queue, count, timeoutMs = 30_000) {
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

export async function purge(model, queue) {
  const ch = await model.createChannel();
  ch.on('error', () => undefined);
  try {
    await ch.purgeQueue(queue);
  } finally {
    await ch.close().catch(() => undefined);
  }
}
