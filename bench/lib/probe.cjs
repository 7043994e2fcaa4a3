// @ts-check
'use strict';
/**
 * The bench's amqplib probe, one implementation for both of its uses:
 *
 * - in the bench process (bench/lib/common.ts re-exports it): `installProbe(channel)` wraps the
 *   amqplib copy a channel comes from, `armProbe(n)` starts a run, `probeResult()` reads it;
 * - preloaded into a child process (`node --require bench/lib/probe.cjs`, with the environment from
 *   `childProbeEnv()`): it wraps every amqplib copy the process loads, found by hooking Module._load
 *   on the resolved file name, and at the N-th ack writes the run's result as JSON to the file the
 *   parent named.
 *
 * Plain CommonJS with Node built-ins only (type-checked through JSDoc), so a child Node-RED process
 * runs the way a user runs it: no tsx, no loader.
 *
 * amqplib's Channel.prototype consume/ack/nack/reject are wrapped once per copy (2.x and 0.x, promise and
 * callback API), so raw amqplib, this package and other packages are timed at the same points: the
 * delivery handed to a consumer callback after the first tenth of N (the run's warm-up) → the N-th
 * message acked (a multiple-ack counts every delivery it settles), per message acked in between. CPU: process.cpuUsage() of this process (user + system); the broker's CPU
 * from /proc/<pid>/stat when the broker runs on this machine.
 */
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const { PerformanceObserver } = require('node:perf_hooks');

/** @typedef {import('amqplib').ConsumeMessage} ConsumeMessage */
/** @typedef {(message: ConsumeMessage | null) => void} Callback */

/**
 * One measured run.
 * @typedef {object} RunResult
 * @property {number} seconds
 * @property {number} msgPerSec
 * @property {number} cpuUsPerMsg
 * @property {number} cpuPercent
 * @property {number} brokerUsPerMsg
 * @property {number} brokerCpuPercent
 * @property {number} [settleFramesPerMsg] ack and nack frames the client wrote per message (a multiple one settles many)
 * @property {number} [gcUsPerMsg] time in V8's garbage collections in the window, per message (a child process only)
 * @property {number} [majorGcs] full (mark-compact) collections in the window (a child process only)
 * @property {number} [deliveriesPerTurn] deliveries per event-loop turn that had any (BENCH_PROBE_TURNS=1 only: it costs an immediate per turn)
 * @property {number} [warmUpCpuUsPerMsg] CPU (user + system) per delivery from the first delivery to the window's start: the warm-up, the JIT compiling the hot path included
 * @property {number} [mainThreadUsPerMsg] CPU of the process's main thread alone in the window, per message (Linux; NaN elsewhere): the rest of cpuUsPerMsg is V8's compiler and GC helper threads
 */

/**
 * @typedef {object} ProbeHooks
 * @property {((message: ConsumeMessage) => void) | undefined} [onDelivery]
 * @property {((message: ConsumeMessage) => void) | undefined} [onNack]
 * @property {number} [warmUp] deliveries before the window starts (default: the first tenth of the target)
 */

/**
 * @typedef {object} ProbeState
 * @property {number} deliveries
 * @property {number} acks
 * @property {number} nacks
 * @property {number} frames ack and nack calls (frames) from the start of the window until the target
 * @property {number} gcMs garbage collection time (ms) from the start of the window until the target
 * @property {number} majorGcs full (mark-compact) collections in the window
 * @property {number} turns event-loop turns with deliveries in the window (counted with BENCH_PROBE_TURNS=1)
 * @property {number} windowDeliveries deliveries in the window (counted with BENCH_PROBE_TURNS=1)
 * @property {number} acks0 acks before the window started (the run's warm-up)
 * @property {number} warmUp deliveries before the window starts
 * @property {number} warmUpCpuUs CPU from the first delivery to the window's start (µs)
 * @property {number} main0 the main thread's CPU at the window's start (ns, NaN when unknown)
 * @property {number} mainEnd the main thread's CPU at the target (ns)
 * @property {number} target
 * @property {number} t0
 * @property {NodeJS.CpuUsage | undefined} cpu0
 * @property {number} tEnd
 * @property {NodeJS.CpuUsage | undefined} cpuEnd
 * @property {number} broker0
 * @property {number} brokerEnd
 * @property {(() => void) | undefined} resolve
 * @property {ProbeHooks['onDelivery']} onDelivery
 * @property {ProbeHooks['onNack']} onNack
 */

/** The names of the environment a preloaded probe reads (childProbeEnv() fills them). */
const ENV = { out: 'BENCH_PROBE_OUT', target: 'BENCH_PROBE_TARGET', warmUp: 'BENCH_PROBE_WARMUP', brokerPid: 'BENCH_BROKER_PID', clockTicks: 'BENCH_BROKER_CLK_TCK' };

// ---------------------------------------------------------------------------------------------
// Broker CPU

/** @type {{ pid: number, clockTicks: number, stat: string } | undefined} */
let broker;

/** The broker process's CPU time so far (µs, user + system), or NaN when unknown. */
function brokerCpuUs() {
  if (!broker) return NaN;
  try {
    const text = fs.readFileSync(broker.stat, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // Fields 14 (utime) and 15 (stime) of proc(5); this slice starts at field 3.
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / broker.clockTicks;
  } catch {
    return NaN;
  }
}

/**
 * Measures this OS process's CPU as the broker's from now on; false (and nothing measured) when its
 * /proc entry is not readable.
 * @param {number} pid
 * @param {number} clockTicks the kernel's clock ticks per second (`getconf CLK_TCK`)
 */
function setBrokerProcess(pid, clockTicks) {
  broker = { pid, clockTicks, stat: `/proc/${pid}/stat` };
  if (Number.isFinite(brokerCpuUs())) return true;
  broker = undefined;
  return false;
}

// ---------------------------------------------------------------------------------------------
// The probe

/**
 * The first tenth of a run's deliveries is its own warm-up and stays out of the window: every
 * contestant, a plain amqplib consumer too, spends 60–140 ms more CPU on its first 2 000 deliveries
 * after the pause between runs than on any later 2 000 (more inside a Node-RED runtime), a fixed cost
 * that would weigh on short runs (prefetch 1, 16 KB) and not on long ones. A fresh process (the peers
 * section) compiles its hot path for longer than that: its runs give a warm-up of their own
 * (`ProbeHooks.warmUp`, BENCH_PROBE_WARMUP) and report its CPU apart (`warmUpCpuUsPerMsg`).
 */
const WARM_UP_FRACTION = 0.1;

/**
 * @param {number} target
 * @param {ProbeHooks} hooks
 * @returns {ProbeState}
 */
const fresh = (target, hooks) => ({
  deliveries: 0,
  acks: 0,
  nacks: 0,
  frames: 0,
  gcMs: 0,
  majorGcs: 0,
  turns: 0,
  windowDeliveries: 0,
  acks0: 0,
  warmUp: hooks.warmUp ?? Math.floor(target * WARM_UP_FRACTION),
  warmUpCpuUs: NaN,
  main0: NaN,
  mainEnd: NaN,
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
const state = fresh(Infinity, {});

/** Whether deliveries are counted per event-loop turn (BENCH_PROBE_TURNS=1), and whether this turn had one. */
const COUNT_TURNS = process.env.BENCH_PROBE_TURNS === '1';
let inTurn = false;
/** Whether GC time is observed (a preloaded probe only). */
let observingGc = false;
const turnEnded = () => {
  inTurn = false;
};

/**
 * The CPU time of this process's main thread so far (ns; Linux's schedstat, NaN elsewhere). The
 * process's CPU (process.cpuUsage()) also counts V8's helper threads: its optimizing compiler and
 * the garbage collector's helpers.
 */
function mainThreadNs() {
  try {
    return Number(fs.readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
}

/** @param {ConsumeMessage} message */
function onDelivered(message) {
  state.deliveries += 1;
  if (state.deliveries === 1 || state.deliveries === state.warmUp + 1) {
    // The window starts here: at the first delivery, then again once the warm-up is over (the CPU
    // since the first delivery, cpu0 until now, is the warm-up's).
    if (state.deliveries > 1 && state.cpu0) {
      const warmUp = process.cpuUsage(state.cpu0);
      state.warmUpCpuUs = warmUp.user + warmUp.system;
    }
    state.main0 = mainThreadNs();
    state.broker0 = brokerCpuUs();
    state.t0 = performance.now();
    state.cpu0 = process.cpuUsage();
    state.acks0 = state.acks;
    state.frames = 0;
    state.gcMs = 0;
    state.majorGcs = 0;
    state.turns = 0;
    state.windowDeliveries = 0;
  }
  if (COUNT_TURNS && state.acks < state.target) {
    state.windowDeliveries += 1;
    if (!inTurn) {
      inTurn = true;
      state.turns += 1;
      setImmediate(turnEnded);
    }
  }
  if (state.onDelivery) state.onDelivery(message);
}

/** Unacked delivery tags per channel: a multiple-ack (`allUpTo`) settles every one up to its tag. */
/** @type {WeakMap<object, Set<number>>} */
const unacked = new WeakMap();

/**
 * @param {object} channel
 * @param {ConsumeMessage} message
 * @param {boolean | undefined} allUpTo
 */
function settled(channel, message, allUpTo) {
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

/** @param {number} count */
function onAcked(count) {
  if (count === 0) return;
  const before = state.acks;
  state.acks += count;
  if (before < state.target && state.acks >= state.target) {
    state.tEnd = performance.now();
    state.cpuEnd = process.cpuUsage(state.cpu0);
    state.mainEnd = mainThreadNs();
    state.brokerEnd = brokerCpuUs();
    const resolve = state.resolve;
    state.resolve = undefined;
    if (resolve) resolve();
  }
}

/**
 * The methods the probe wraps; the originals are called with the channel as `this`.
 * @typedef {object} ChannelMethods
 * @property {(this: object, queue: string, callback: Callback, ...rest: unknown[]) => unknown} consume
 * @property {(this: object, message: ConsumeMessage, allUpTo?: boolean) => void} ack
 * @property {(this: object, message: ConsumeMessage, allUpTo?: boolean, requeue?: boolean) => void} nack
 * @property {((this: object, message: ConsumeMessage, requeue?: boolean) => void) | undefined} [reject]
 */

/** @type {Set<object>} */
const probed = new Set();

/**
 * The object of `from`'s prototype chain (itself included) that defines `ack`: the Channel class of
 * an amqplib copy (a ConfirmChannel inherits it; 2.x and 0.x both define ack on Channel).
 * @param {object | null} from
 * @returns {ChannelMethods | undefined}
 */
function channelClass(from) {
  let proto = from;
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'ack')) proto = /** @type {object | null} */ (Object.getPrototypeOf(proto));
  return proto ? /** @type {ChannelMethods} */ (proto) : undefined;
}

/**
 * Wraps consume/ack/nack of one amqplib Channel class, once.
 * @param {ChannelMethods} methods
 */
function wrap(methods) {
  if (probed.has(methods)) return;
  probed.add(methods);
  const { consume, ack, nack, reject } = methods;
  // `...rest`: options, and the completion callback of amqplib's callback API (what amqp-ts uses).
  methods.consume = function probedConsume(queue, callback, ...rest) {
    let tags = unacked.get(this);
    if (!tags) {
      tags = new Set();
      unacked.set(this, tags);
    }
    const channelTags = tags;
    /** @type {Callback} */
    const probedCallback = (message) => {
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
    if (state.acks < state.target) state.frames += 1;
    onAcked(settled(this, message, allUpTo));
  };
  methods.nack = function probedNack(message, allUpTo, requeue) {
    nack.call(this, message, allUpTo, requeue);
    if (state.acks < state.target) state.frames += 1;
    state.nacks += settled(this, message, allUpTo);
    if (state.onNack) state.onNack(message);
  };
  // basic.reject (the package's dead-letter since RabbitMQ 4.3 counts only a reject): a nack of one message.
  if (reject) {
    methods.reject = function probedReject(message, requeue) {
      reject.call(this, message, requeue);
      if (state.acks < state.target) state.frames += 1;
      state.nacks += settled(this, message, false);
      if (state.onNack) state.onNack(message);
    };
  }
}

/**
 * Wraps the amqplib copy a channel (or a Channel prototype) belongs to.
 * @param {object} channel
 */
function installProbe(channel) {
  const methods = channelClass(channel);
  if (!methods) throw new Error('amqplib Channel.prototype.ack not found');
  wrap(methods);
}

/**
 * Resets the counters; the promise resolves at the `target`-th ack.
 * @param {number} target
 * @param {ProbeHooks} [hooks]
 * @returns {Promise<void>}
 */
function armProbe(target, hooks = {}) {
  Object.assign(state, fresh(target, hooks));
  return new Promise((resolve) => {
    state.resolve = resolve;
  });
}

/** @returns {{ deliveries: number, acks: number, nacks: number }} */
function probeCounts() {
  return { deliveries: state.deliveries, acks: state.acks, nacks: state.nacks };
}

/**
 * Throughput and CPU of the armed window: the delivery after the warm-up (the first tenth) → the
 * target-th ack, per message settled in it.
 * @returns {RunResult}
 */
function probeResult() {
  const seconds = (state.tEnd - state.t0) / 1000;
  const cpu = state.cpuEnd ? state.cpuEnd.user + state.cpuEnd.system : NaN;
  const brokerUs = state.brokerEnd - state.broker0;
  // The messages settled in the window: the target less those acked during the warm-up.
  const count = state.target - state.acks0;
  return {
    seconds,
    msgPerSec: count / seconds,
    cpuUsPerMsg: cpu / count,
    cpuPercent: (cpu / 1e6 / seconds) * 100,
    brokerUsPerMsg: brokerUs / count,
    brokerCpuPercent: (brokerUs / 1e6 / seconds) * 100,
    settleFramesPerMsg: state.frames / count,
    gcUsPerMsg: observingGc ? (state.gcMs * 1000) / count : NaN,
    majorGcs: observingGc ? state.majorGcs : NaN,
    deliveriesPerTurn: state.turns > 0 ? state.windowDeliveries / state.turns : NaN,
    warmUpCpuUsPerMsg: state.warmUp > 0 ? state.warmUpCpuUs / state.warmUp : NaN,
    mainThreadUsPerMsg: (state.mainEnd - state.main0) / 1000 / count,
  };
}

// ---------------------------------------------------------------------------------------------
// Child processes

/** This file, for `node --require`. */
const PROBE_FILE = __filename;

/**
 * The environment a child started with `--require PROBE_FILE` needs: where to write its result, after
 * how many acks, after how many deliveries its window starts (default: the first tenth), and the
 * broker process (when this process measures it, see setBrokerProcess()).
 * @param {string} outFile
 * @param {number} target
 * @param {number} [warmUp]
 * @returns {Record<string, string>}
 */
function childProbeEnv(outFile, target, warmUp) {
  /** @type {Record<string, string>} */
  const env = { [ENV.out]: outFile, [ENV.target]: String(target) };
  if (warmUp !== undefined) env[ENV.warmUp] = String(warmUp);
  if (broker) {
    env[ENV.brokerPid] = String(broker.pid);
    env[ENV.clockTicks] = String(broker.clockTicks);
  }
  return env;
}

/**
 * What a preloaded probe writes: the run, its counts, and the amqplib copies it wrapped.
 * @typedef {RunResult & { deliveries: number, acks: number, nacks: number, amqplib: string[] }} ChildResult
 */

// amqplib loads these as './lib/channel_model' (promise API) and './lib/callback_model' (callback API).
const MODEL_REQUEST = /(?:^|[\\/])(?:channel|callback)_model(?:\.js)?$/;
const MODEL_FILE = /[\\/]amqplib[\\/]lib[\\/](?:channel|callback)_model\.js$/;

/**
 * Preload mode: wrap every amqplib copy this process loads, and write the result at the target-th ack.
 * @param {string} outFile
 */
function preload(outFile) {
  const target = Number(process.env[ENV.target]);
  if (!(target > 0)) throw new Error(`bench probe: ${ENV.target} must be a positive count`);
  const pid = Number(process.env[ENV.brokerPid]);
  if (pid > 0) setBrokerProcess(pid, Number(process.env[ENV.clockTicks]) || 100);
  /** @type {string[]} */
  const copies = [];
  // Module._load is Node's CommonJS loader entry (not in @types/node): every require() passes here.
  const loader = /** @type {{ _load: (request: string, parent: unknown, isMain: boolean) => unknown, _resolveFilename: (request: string, parent: unknown, isMain: boolean) => string }} */ (
    /** @type {unknown} */ (Module)
  );
  // GC time in the window (a preloaded probe owns its process: nothing else observes for it).
  observingGc = true;
  new PerformanceObserver((list) => {
    if (state.t0 === 0 || state.cpuEnd) return;
    for (const entry of list.getEntries()) {
      state.gcMs += entry.duration;
      // perf_hooks.constants.NODE_PERFORMANCE_GC_MAJOR: a full mark-compact of the old generation.
      if (/** @type {{ detail?: { kind?: number } }} */ (/** @type {unknown} */ (entry)).detail?.kind === 4) state.majorGcs += 1;
    }
  }).observe({ entryTypes: ['gc'] });
  const load = loader._load;
  loader._load = function probeLoad(request, parent, isMain) {
    const exports = load.call(this, request, parent, isMain);
    if (MODEL_REQUEST.test(request)) {
      let file = '';
      try {
        file = loader._resolveFilename(request, parent, isMain);
      } catch {
        // Not a file path (resolved by someone else's hook): not amqplib's.
      }
      const methods = MODEL_FILE.test(file) ? channelClass(/** @type {{ Channel?: { prototype: object } }} */ (exports).Channel?.prototype ?? null) : undefined;
      if (methods && !probed.has(methods)) {
        wrap(methods);
        const version = amqplibVersion(file);
        copies.push(version);
        process.stderr.write(`bench probe: wrapped amqplib ${version} (${file})\n`);
      }
    }
    return exports;
  };
  const warmUp = process.env[ENV.warmUp] === undefined ? undefined : Number(process.env[ENV.warmUp]);
  if (warmUp !== undefined && !(warmUp >= 0 && warmUp < target)) throw new Error(`bench probe: ${ENV.warmUp} must be a count below ${ENV.target}`);
  void armProbe(target, { warmUp }).then(() => {
    /** @type {ChildResult} */
    const result = { ...probeResult(), ...probeCounts(), amqplib: [...new Set(copies)] };
    // Written whole, then renamed: the parent never reads half a file.
    const partial = `${outFile}.partial`;
    fs.writeFileSync(partial, JSON.stringify(result));
    fs.renameSync(partial, outFile);
  });
}

/** @param {string} modelFile amqplib's lib/…_model.js */
function amqplibVersion(modelFile) {
  try {
    return /** @type {{ version: string }} */ (JSON.parse(fs.readFileSync(path.join(path.dirname(modelFile), '..', 'package.json'), 'utf8'))).version;
  } catch {
    return '?';
  }
}

const outFile = process.env[ENV.out];
if (outFile) preload(outFile);

module.exports = { installProbe, armProbe, probeCounts, probeResult, brokerCpuUs, setBrokerProcess, childProbeEnv, PROBE_FILE };
