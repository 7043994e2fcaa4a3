'use strict';
/**
 * Preloaded into the Node-RED processes of the bench's scale section (`node --expose-gc --require
 * scale-probe.cjs red.js …`, BENCH_SCALE_OUT set): counts what the package does on its broker
 * connections and reports it on demand.
 *
 * It wraps every amqplib copy the process loads (hooking Module._load on lib/channel_model.js):
 * - consume: when each consume-ok arrives (how long until every consumer consumes), and each delivery;
 * - ack/nack: the time of the last one (throughput of processes competing on one queue);
 * - checkQueue (a passive queue.declare: how the package looks at queue depths) and channel opens;
 * and counts the process's HTTP requests through fetch (the management API).
 *
 * On SIGWINCH (ignored by default, and not one red.js stops on: it exits on SIGUSR2) it writes a
 * report as JSON to BENCH_SCALE_OUT (written whole, then renamed), numbered so the parent knows it is
 * a fresh one. When BENCH_SCALE_OUT + '.gc' exists, a full GC runs first (with --expose-gc); when
 * BENCH_SCALE_OUT + '.reset' exists, the counters start again from zero after the report. The flag
 * files are removed once read.
 * Wall-clock times (ms since the epoch, sub-millisecond) compare across processes.
 */
const fs = require('node:fs');
const Module = require('node:module');

const outFile = process.env.BENCH_SCALE_OUT;
const MODEL_FILE = /[\\/]amqplib[\\/]lib[\\/]channel_model\.js$/;
const now = () => performance.timeOrigin + performance.now();

const counts = {
  consumeOk: 0,
  lastConsumeOkAt: 0,
  deliveries: 0,
  firstDeliveryAt: 0,
  lastSettleAt: 0,
  checkQueue: 0,
  channelOpens: 0,
  httpRequests: 0,
};
const wrapped = new Set();

function wrapModel(exports) {
  const { Channel, ChannelModel } = exports;
  if (!Channel || !ChannelModel || wrapped.has(Channel.prototype)) return;
  wrapped.add(Channel.prototype);
  const ch = Channel.prototype;
  const { consume, ack, nack, checkQueue } = ch;
  ch.consume = function scaleConsume(queue, callback, ...rest) {
    const counted = (message) => {
      if (message) {
        counts.deliveries += 1;
        if (counts.firstDeliveryAt === 0) counts.firstDeliveryAt = now();
      }
      callback(message);
    };
    const result = consume.call(this, queue, counted, ...rest);
    Promise.resolve(result).then(
      () => {
        counts.consumeOk += 1;
        counts.lastConsumeOkAt = now();
      },
      () => undefined,
    );
    return result;
  };
  ch.ack = function scaleAck(...args) {
    counts.lastSettleAt = now();
    return ack.apply(this, args);
  };
  ch.nack = function scaleNack(...args) {
    counts.lastSettleAt = now();
    return nack.apply(this, args);
  };
  ch.checkQueue = function scaleCheckQueue(...args) {
    counts.checkQueue += 1;
    return checkQueue.apply(this, args);
  };
  const model = ChannelModel.prototype;
  for (const name of ['createChannel', 'createConfirmChannel']) {
    const original = model[name];
    model[name] = function scaleCreate(...args) {
      counts.channelOpens += 1;
      return original.apply(this, args);
    };
  }
}

if (outFile) {
  const loader = Module;
  const load = loader._load;
  loader._load = function scaleLoad(request, parent, isMain) {
    const exports = load.call(this, request, parent, isMain);
    if (/channel_model(?:\.js)?$/.test(request)) {
      let file = '';
      try {
        file = loader._resolveFilename(request, parent, isMain);
      } catch {
        // Resolved by someone else's hook: not amqplib's file.
      }
      if (MODEL_FILE.test(file)) wrapModel(exports);
    }
    return exports;
  };

  const originalFetch = globalThis.fetch;
  if (typeof originalFetch === 'function') {
    globalThis.fetch = function scaleFetch(...args) {
      counts.httpRequests += 1;
      return originalFetch.apply(this, args);
    };
  }

  let seq = 0;
  const fresh = { ...counts };
  const flag = (name) => {
    const file = `${outFile}.${name}`;
    if (!fs.existsSync(file)) return false;
    fs.rmSync(file, { force: true });
    return true;
  };
  process.on('SIGWINCH', () => {
    if (flag('gc') && typeof global.gc === 'function') {
      global.gc();
      global.gc();
    }
    seq += 1;
    const memory = process.memoryUsage();
    const text = JSON.stringify({ seq, at: now(), rss: memory.rss, heapUsed: memory.heapUsed, cpu: process.cpuUsage(), amqplibCopies: wrapped.size, ...counts });
    fs.writeFileSync(`${outFile}.partial`, text);
    fs.renameSync(`${outFile}.partial`, outFile);
    if (flag('reset')) Object.assign(counts, fresh);
  });
}
