/** The retry path's runs (see scenarios.ts): raw (one nack and one ack per message), Node-RED alone and the package. */
import { performance } from 'node:perf_hooks';
import type { ConsumeMessage } from 'amqplib';
import { tab, type Names } from '../../test/helpers/flows';
import { armProbe, connect, probeCounts, probeResult, sleep, withTimeout, type RunResult } from './common';
import { startThroughNodeRed } from './nodered-alone';
import { batchedSettler, sameWorkMsg } from './raw-consumer.cjs';
import { benchHooks, loadFlow, unloadFlow, type Msg } from './nodered';
import { benchBroker, benchConfig, benchConsumer, settleNode, timeoutFor, type Ctx } from './scenario-base';

// Retry path --------------------------------------------------------------------------------------

function rejectedCount(message: ConsumeMessage, mainQueue: string): number {
  const deaths: unknown = message.properties.headers?.['x-death'];
  if (!Array.isArray(deaths)) return 0;
  const d = (deaths as Array<Record<string, unknown>>).find((x) => x.queue === mainQueue && x.reason === 'rejected');
  return d ? Number(d.count) : 0;
}

type Stop = () => Promise<void>;

/** Raw: nack (requeue=false → DLX → retry queue → TTL → main queue) on the first delivery, ack the second. */
async function startRawRetry(topo: Names, prefetch: number): Promise<Stop> {
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

/**
 * The best hand-written retry consumer: the same work as the package (the msg built, one setImmediate
 * hop as a flow), and its settles batched per event-loop turn as the package's AckBatcher does: in tag
 * order, one frame with `multiple` per run of the same kind (dead-letter nacks, acks).
 */
async function startRawRetryBatched(topo: Names, prefetch: number): Promise<Stop> {
  const model = await connect('bench raw retry consumer (batched)');
  const ch = await model.createChannel();
  ch.on('error', () => undefined);
  await ch.prefetch(prefetch);
  const settler = batchedSettler(ch);
  await ch.consume(
    topo.mainQueue,
    (m) => {
      if (m === null) return;
      const msg = sameWorkMsg(m, topo.mainQueue, `raw:${m.fields.deliveryTag}`);
      setImmediate(() => settler.settle(m, retryKind(msg)));
    },
    { noAck: false },
  );
  return () => model.close().catch(() => undefined);
}

/** The retry path's decision: dead-letter the first delivery, ack the return. */
const retryKind = (msg: Msg): 'ack' | 'nack' => (msg.retry.attempt === 1 ? 'nack' : 'ack');

/**
 * Node-RED alone: the batched raw retry consumer (startRawRetryBatched) with the package flow's two
 * hops per delivery in the same runtime: bench-source → bench-route (the package flow's decision node)
 * → bench-sink, which settles it.
 */
function startNodeRedAloneRetry(topo: Names, prefetch: number): Promise<Stop> {
  return startThroughNodeRed({
    queue: topo.mainQueue,
    prefetch,
    hops: 2,
    settler: (ch) => {
      const settler = batchedSettler(ch);
      return { settle: (m, msg) => settler.settle(m, retryKind(msg)) };
    },
  });
}

/** Package: consumer → bench-route (attempt 1 → retry-settle(retry), later → retry-settle(ack)). */
async function startPkgRetry(ctx: Ctx, topo: Names, prefetch: number): Promise<Stop> {
  await loadFlow([
    tab(),
    benchBroker(ctx),
    benchConfig(topo),
    benchConsumer([['route']], prefetch),
    { id: 'route', type: 'bench-route', z: 'flow', outputs: 2, wires: [['ack'], ['retry']] },
    settleNode('ack', 'ack'),
    settleNode('retry', 'retry'),
  ]);
  return () => unloadFlow();
}

/** Messages preloaded, each retried once then acked: wall time and CPU per message (two deliveries). */
export async function retryThroughput(
  ctx: Ctx,
  side: 'raw' | 'raw-batched' | 'nodered' | 'pkg',
  { topo, count, prefetch }: { topo: Names; count: number; prefetch: number },
): Promise<RunResult> {
  const done = armProbe(count);
  const starts: Record<typeof side, () => Promise<Stop>> = {
    raw: () => startRawRetry(topo, prefetch),
    'raw-batched': () => startRawRetryBatched(topo, prefetch),
    nodered: () => startNodeRedAloneRetry(topo, prefetch),
    pkg: () => startPkgRetry(ctx, topo, prefetch),
  };
  const stop = await starts[side]();
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
export async function retryLag(
  ctx: Ctx,
  side: 'raw' | 'pkg',
  { topo, count, rate, prefetch, ttlMs, tag }: { topo: Names; count: number; rate: number; prefetch: number; ttlMs: number; tag: string },
): Promise<{ amqpLag: number[]; flowLag: number[] }> {
  const nackAt = new Map<unknown, number>();
  const amqpLag: number[] = [];
  const flowLag: number[] = [];
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
