// @ts-check
'use strict';
/**
 * The bench probe's CPU clocks (probe.cjs): the broker process's CPU from /proc/<pid>/stat when the broker runs on
 * this machine, and this process's main thread alone (Linux's schedstat). Node built-ins only.
 */
const fs = require('node:fs');


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

/** The broker process measured (setBrokerProcess()), if any. */
function brokerProcess() {
  return broker;
}

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


module.exports = { brokerCpuUs, setBrokerProcess, brokerProcess, mainThreadNs };
