/**
 * One measured run of each thing the benchmark compares. Every function returns
 * `{ msgPerSec, cpuUsPerMsg, seconds, ... }` for one run; the caller repeats and takes medians.
 *
 * Raw and package sides are timed at the same points by the amqplib probe (common.mjs): the first
 * delivery handed to a consumer callback → the N-th ack written. Publishing is timed from the first
 * publish to the N-th confirm (raw) or the N-th msg leaving the node (package: after its confirm).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { armProbe, brokerCpuUs, connect, probeCounts, probeResult, sleep, withTimeout } from './common.mjs';
import { benchHooks, brokerNode, configNode, consumerNode, consumerSessionClass, getNode, loadFlow, tab, unloadFlow } from './nodered.mjs';

/** Generous: a run that does not finish is a broken run, never a slow one. */
const timeoutFor = (count) => Math.max(60_000, count * 5);

function settleNode(id, action, wires = []) {
  return { id, type: 'retry-settle', z: 'flow', action, reason: 'bench', wires };
}

async function waitForConsumer(model, queue, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    let consumers = 0;
    try {
      consumers = (await ch.checkQueue(queue)).consumerCount;
      await ch.close();
    } catch {
      // Not declared yet (a 404 closes the channel).
    }
    if (consumers > 0) return;
    if (Date.now() > deadline) throw new Error(`no consumer on ${queue} after ${timeoutMs / 1000} s`);
    await sleep(25);
  }
}

/** Lets the package declare its own topology (a consumer in a flow), so raw and package use the same queues. */
export async function declareTopology(ctx, topo) {
  await loadFlow([tab(), brokerNode(ctx.url), configNode(topo), consumerNode([[]], 1)]);
  try {
    await waitForConsumer(ctx.model, topo.mainQueue);
  } finally {
    await unloadFlow();
  }
}

// Consume + ack -----------------------------------------------------------------------------------

export async function rawConsume(ctx, { queue, count, prefetch, parse = false }) {
  const model = await connect('bench raw consumer');
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(prefetch);
    const done = armProbe(count);
    await ch.consume(
      queue,
      (m) => {
        if (m === null) return;
        if (parse) JSON.parse(m.content.toString('utf8'));
        ch.ack(m);
      },
      { noAck: false },
    );
    await withTimeout(done, timeoutFor(count), `raw consumer: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await model.close().catch(() => undefined);
  }
}

/** consumer → retry-settle(ack) in the Node-RED runtime. */
export async function pkgConsume(ctx, { topo, count, prefetch, spies = false, syncDelivery = false, consumer = {} }) {
  const done = armProbe(count);
  await loadFlow([tab(), brokerNode(ctx.url), configNode(topo), consumerNode([['ack']], prefetch, consumer), settleNode('ack', 'ack')], { spies, syncDelivery });
  try {
    await withTimeout(done, timeoutFor(count), `package consumer: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await unloadFlow();
  }
}

/**
 * The package's ConsumerSession (dist/lib) settling each delivery directly, no Node-RED routing:
 * what the package's own code costs per message. Its connection, topology and registry come from the
 * package's config nodes, so the bench does not depend on their internal shapes.
 */
export async function sessionConsume(ctx, { topo, count, prefetch, settleTimeoutMs = 60_000, onDelivered }) {
  const ConsumerSession = consumerSessionClass();
  await loadFlow([tab(), brokerNode(ctx.url), configNode(topo)]);
  const broker = getNode('broker');
  const config = getNode('config');
  const user = { id: 'bench-session', status: () => undefined };
  const session = new ConsumerSession({
    connection: broker.connection,
    topology: config.topology,
    registry: config.registry,
    prefetch,
    settleTimeoutMs,
    decode: 'auto',
    invalidBody: 'park',
  });
  const failures = [];
  session.on('message', (delivered) => {
    if (onDelivered) onDelivered(delivered);
    session.settle(delivered.amqp.deliveryId, 'ack').catch((err) => failures.push(err));
  });
  session.on('error', (text) => failures.push(new Error(text)));
  const done = armProbe(count);
  session.start();
  broker.register(user);
  try {
    await withTimeout(done, timeoutFor(count), `ConsumerSession: ${count} acks (got ${probeCounts().acks})`);
    if (failures.length > 0) throw failures[0];
    return probeResult();
  } finally {
    await session.stop().catch(() => undefined);
    await broker.deregister(user).catch(() => undefined);
    await unloadFlow();
  }
}

// Retry path --------------------------------------------------------------------------------------

function rejectedCount(message, mainQueue) {
  const deaths = message.properties.headers?.['x-death'];
  if (!Array.isArray(deaths)) return 0;
  const d = deaths.find((x) => x.queue === mainQueue && x.reason === 'rejected');
  return d ? Number(d.count) : 0;
}

/** Raw: nack (requeue=false → DLX → retry queue → TTL → main queue) on the first delivery, ack the second. */
async function startRawRetry(topo, prefetch) {
  const model = await connect('bench raw retry consumer');
  const ch = await model.createChannel();
  ch.on('error', () => undefined);
  await ch.prefetch(prefetch);
  await ch.consume(
    topo.mainQueue,
    (m) => {
      if (m === null) return;
      if (rejectedCount(m, topo.mainQueue) === 0) ch.nack(m, false, false);
      else ch.ack(m);
    },
    { noAck: false },
  );
  return () => model.close().catch(() => undefined);
}

/** Package: consumer → bench-route (attempt 1 → retry-settle(retry), later → retry-settle(ack)). */
async function startPkgRetry(ctx, topo, prefetch) {
  await loadFlow([
    tab(),
    brokerNode(ctx.url),
    configNode(topo),
    consumerNode([['route']], prefetch),
    { id: 'route', type: 'bench-route', z: 'flow', outputs: 2, wires: [['ack'], ['retry']] },
    settleNode('ack', 'ack'),
    settleNode('retry', 'retry'),
  ]);
  return () => unloadFlow();
}

/** Messages preloaded, each retried once then acked: wall time and CPU per message (two deliveries). */
export async function retryThroughput(ctx, side, { topo, count, prefetch }) {
  const done = armProbe(count);
  const stop = side === 'raw' ? await startRawRetry(topo, prefetch) : await startPkgRetry(ctx, topo, prefetch);
  try {
    await withTimeout(done, timeoutFor(count), `${side} retry: ${count} final acks (got ${JSON.stringify(probeCounts())})`);
    return probeResult();
  } finally {
    await stop();
  }
}

/**
 * Lag beyond the TTL: messages published at a steady rate (well below capacity, so no backlog);
 * lag = redelivery − nack − TTL, per message. `amqp`: redelivery handed to amqplib's consumer
 * callback (both sides); `flow`: the package's msg reaching the next node in the flow (for raw, the
 * same as amqp).
 */
export async function retryLag(ctx, side, { topo, count, rate, prefetch, ttlMs, tag }) {
  const nackAt = new Map();
  const amqpLag = [];
  const flowLag = [];
  const done = armProbe(count, {
    onNack: (m) => nackAt.set(m.properties.messageId, performance.now()),
    onDelivery: (m) => {
      const t = nackAt.get(m.properties.messageId);
      if (t !== undefined) {
        const lag = performance.now() - t - ttlMs;
        amqpLag.push(lag);
        if (side === 'raw') flowLag.push(lag);
      }
    },
  });
  benchHooks.onRoute = (msg) => {
    if (msg.retry.attempt < 2) return;
    const t = nackAt.get(msg.amqp.properties.messageId);
    if (t !== undefined) flowLag.push(performance.now() - t - ttlMs);
  };
  const stop = side === 'raw' ? await startRawRetry(topo, prefetch) : await startPkgRetry(ctx, topo, prefetch);
  const publisher = await connect('bench paced publisher');
  try {
    const ch = await publisher.createConfirmChannel();
    ch.on('error', () => undefined);
    const body = Buffer.from(JSON.stringify(ctx.body1k));
    const start = performance.now();
    let sent = 0;
    while (sent < count) {
      const due = Math.min(count, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
      for (; sent < due; sent += 1) {
        ch.sendToQueue(topo.mainQueue, body, { contentType: 'application/json', deliveryMode: 1, messageId: `${tag}-${sent}`, headers: { source: 'bench' } });
      }
      await sleep(5);
    }
    await ch.waitForConfirms();
    await withTimeout(done, timeoutFor(count) + (count / rate) * 1000, `${side} retry lag: ${count} final acks (got ${JSON.stringify(probeCounts())})`);
    return { amqpLag, flowLag };
  } finally {
    benchHooks.onRoute = undefined;
    await publisher.close().catch(() => undefined);
    await stop();
  }
}

// Park path ---------------------------------------------------------------------------------------

/** Raw: for each delivery, a confirmed mandatory publish of the original + park headers, then the ack. */
export async function rawPark(ctx, { topo, count, prefetch }) {
  const model = await connect('bench raw parker');
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    const pub = await model.createConfirmChannel();
    pub.on('error', () => undefined);
    let returned = 0;
    pub.on('return', () => {
      returned += 1;
    });
    await ch.prefetch(prefetch);
    const done = armProbe(count);
    await ch.consume(
      topo.mainQueue,
      (m) => {
        if (m === null) return;
        const p = m.properties;
        const headers = {
          ...(p.headers ?? {}),
          'park-reason': 'bench',
          'park-time': new Date().toISOString(),
          'park-original-exchange': m.fields.exchange,
          'park-original-routing-key': m.fields.routingKey,
          'park-original-queue': topo.mainQueue,
          'retry-attempt': 1,
        };
        const options = { contentType: p.contentType, correlationId: p.correlationId, messageId: p.messageId, timestamp: p.timestamp, headers, persistent: true, mandatory: true };
        pub.publish('', topo.parkingQueue, m.content, options, (err) => {
          if (!err && returned === 0) ch.ack(m);
        });
      },
      { noAck: false },
    );
    await withTimeout(done, timeoutFor(count), `raw park: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await model.close().catch(() => undefined);
  }
}

/** Package: consumer → park-publisher (confirmed publish to the parking queue, then ack). */
export async function pkgPark(ctx, { topo, count, prefetch }) {
  const done = armProbe(count);
  await loadFlow([
    tab(),
    brokerNode(ctx.url),
    configNode(topo),
    consumerNode([['park']], prefetch),
    { id: 'park', type: 'park-publisher', z: 'flow', reason: 'bench', wires: [[]] },
  ]);
  try {
    await withTimeout(done, timeoutFor(count), `package park: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await unloadFlow();
  }
}

// Publish with confirms ---------------------------------------------------------------------------

function timed(count, run) {
  const broker0 = brokerCpuUs();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  return run().then(() => {
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const broker = brokerCpuUs() - broker0;
    const us = cpu.user + cpu.system;
    return {
      seconds,
      msgPerSec: count / seconds,
      cpuUsPerMsg: us / count,
      cpuPercent: (us / 1e6 / seconds) * 100,
      brokerUsPerMsg: broker / count,
      brokerCpuPercent: (broker / 1e6 / seconds) * 100,
    };
  });
}

/** Raw ConfirmChannel: payload JSON-encoded per message, a messageId, mandatory, persistent; `window` in flight. */
export async function rawPublish(ctx, { queue, count, window, payload }) {
  const model = await connect('bench raw publisher');
  try {
    const ch = await model.createConfirmChannel();
    ch.on('error', () => undefined);
    let returned = 0;
    ch.on('return', () => {
      returned += 1;
    });
    const result = await timed(count, () =>
      withTimeout(
        new Promise((resolve, reject) => {
          let sent = 0;
          let confirmed = 0;
          const one = () => {
            sent += 1;
            const content = Buffer.from(JSON.stringify(payload), 'utf8');
            ch.publish('', queue, content, { contentType: 'application/json', messageId: randomUUID(), persistent: true, mandatory: true }, (err) => {
              if (err) {
                reject(err instanceof Error ? err : new Error(String(err)));
                return;
              }
              confirmed += 1;
              if (confirmed === count) resolve();
              else if (sent < count) one();
            });
          };
          for (let k = 0; k < window && sent < count; k += 1) one();
        }),
        timeoutFor(count),
        'raw publisher confirms',
      ),
    );
    if (returned > 0) throw new Error(`${returned} raw publishes returned unroutable`);
    return result;
  } finally {
    await model.close().catch(() => undefined);
  }
}

/** retry-publish fed with node.receive(), `window` msgs in flight; a msg is done when it leaves the node. */
export async function pkgPublish(ctx, { queue, count, window, payload }) {
  await loadFlow([
    tab(),
    brokerNode(ctx.url),
    { id: 'pub', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', exchange: '', routingKey: queue, persistent: true, contentType: '', declareQueue: '', wires: [['sink']] },
    { id: 'sink', type: 'bench-sink', z: 'flow', wires: [] },
  ]);
  const pub = getNode('pub');
  // retry-publish fails a msg that arrives before the broker connection is up (it does not wait), so
  // the bench waits for the connection first.
  const broker = getNode('broker');
  const deadline = Date.now() + 30_000;
  while (broker.connection?.state?.phase !== 'connected') {
    if (Date.now() > deadline) throw new Error(`retry-broker not connected after 30 s (${JSON.stringify(broker.connection?.state)})`);
    await sleep(10);
  }
  const pump = (n) =>
    new Promise((resolve) => {
      let sent = 0;
      let completed = 0;
      benchHooks.onSink = () => {
        completed += 1;
        if (completed === n) resolve();
        else if (sent < n) {
          sent += 1;
          pub.receive({ payload });
        }
      };
      for (let k = 0; k < window && sent < n; k += 1) {
        sent += 1;
        pub.receive({ payload });
      }
    });
  try {
    // Untimed: the first msgs open the connection's confirm channel.
    await withTimeout(pump(Math.min(window, 10)), 30_000, 'retry-publish warm-up (is the broker reachable?)');
    return await timed(count, () => withTimeout(pump(count), timeoutFor(count), 'retry-publish confirms'));
  } finally {
    benchHooks.onSink = undefined;
    await unloadFlow();
  }
}

// Node-RED's own cost -------------------------------------------------------------------------------

/**
 * bench-source → bench-sink (or → two sinks: fan-out, so Node-RED deep-clones the second copy), with
 * `window` msgs in flight, each built by `makeMsg()`. No broker, no package code: what Node-RED's
 * routing costs per msg in this runtime.
 */
export async function nodeRedPair({ count, window, makeMsg, fanout = false, spies = false }) {
  const wires = fanout ? [['sink', 'sink2']] : [['sink']];
  await loadFlow(
    [tab(), { id: 'src', type: 'bench-source', z: 'flow', wires }, { id: 'sink', type: 'bench-sink', z: 'flow', wires: [] }, { id: 'sink2', type: 'bench-sink', z: 'flow', wires: [] }],
    { spies },
  );
  const src = getNode('src');
  try {
    return await timed(count, () =>
      withTimeout(
        new Promise((resolve) => {
          let sent = 0;
          let completed = 0;
          benchHooks.onSink = (_msg, id) => {
            if (id !== 'sink') return;
            completed += 1;
            if (completed === count) resolve();
            else if (sent < count) {
              sent += 1;
              src.emitMsg(makeMsg());
            }
          };
          for (let k = 0; k < window && sent < count; k += 1) {
            sent += 1;
            src.emitMsg(makeMsg());
          }
        }),
        timeoutFor(count),
        'Node-RED source → sink',
      ),
    );
  } finally {
    benchHooks.onSink = undefined;
    await unloadFlow();
  }
}
