// @ts-check
'use strict';
/**
 * The bench probe's measured window (probe.cjs): the counters one run keeps, what starts it (the delivery after the
 * warm-up) and ends it (the target-th ack), and its result per message. The wrapped amqplib methods
 * (`probe-wrap.cjs`) report deliveries and acks here. Node built-ins only.
 */
const { brokerCpuUs, mainThreadNs } = require('./probe-cpu.cjs');

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
/** Whether GC time is observed (a preloaded probe sets it: it owns its process). */
const gcWatch = { observing: false };
const turnEnded = () => {
  inTurn = false;
};

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
    gcUsPerMsg: gcWatch.observing ? (state.gcMs * 1000) / count : NaN,
    majorGcs: gcWatch.observing ? state.majorGcs : NaN,
    deliveriesPerTurn: state.turns > 0 ? state.windowDeliveries / state.turns : NaN,
    warmUpCpuUsPerMsg: state.warmUp > 0 ? state.warmUpCpuUs / state.warmUp : NaN,
    mainThreadUsPerMsg: (state.mainEnd - state.main0) / 1000 / count,
  };
}

module.exports = { state, gcWatch, onDelivered, onAcked, armProbe, probeCounts, probeResult };
