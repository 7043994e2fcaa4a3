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
 *
 * Its parts: `probe-cpu.cjs` (the broker's and the main thread's CPU), `probe-window.cjs` (a run's counters and
 * result), `probe-wrap.cjs` (amqplib's Channel methods wrapped). This file is the one preloaded, and the one imported.
 */
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const { PerformanceObserver } = require('node:perf_hooks');
const { brokerCpuUs, setBrokerProcess, brokerProcess } = require('./probe-cpu.cjs');
const { probed, channelClass, wrap, installProbe } = require('./probe-wrap.cjs');
const { gcWatch, state, armProbe, probeCounts, probeResult } = require('./probe-window.cjs');

/** @typedef {import('./probe-window.cjs').RunResult} RunResult */

/** The names of the environment a preloaded probe reads (childProbeEnv() fills them). */
const ENV = { out: 'BENCH_PROBE_OUT', target: 'BENCH_PROBE_TARGET', warmUp: 'BENCH_PROBE_WARMUP', brokerPid: 'BENCH_BROKER_PID', clockTicks: 'BENCH_BROKER_CLK_TCK' };

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
  const broker = brokerProcess();
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
  gcWatch.observing = true;
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
