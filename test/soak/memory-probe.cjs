'use strict';
/**
 * Preloaded into each soak Node-RED process (`node --expose-gc --require <this file>`): every 30 s a
 * full collection, then what the process retains (V8's live heap and the memory outside it: Buffers)
 * and its RSS, as one marked line on stdout, which the soak reads from the process's output. A leak
 * raises what is retained after a full collection; the RSS alone keeps V8's committed heap at its
 * high-water mark (pages stay committed after a burst: docs/faults.md#the-soak).
 */
const MARK = 'SOAK_MEMORY ';
const everyMs = Number(process.env.SOAK_MEMORY_EVERY_MS || 30000);
if (typeof global.gc === 'function') {
  setInterval(() => {
    global.gc();
    const m = process.memoryUsage();
    process.stdout.write(`${MARK}${JSON.stringify({ at: Date.now(), pid: process.pid, rss: m.rss, heapUsed: m.heapUsed, external: m.external })}\n`);
  }, everyMs).unref();
}
