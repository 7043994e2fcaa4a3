/**
 * One measured run of each thing the benchmark compares. Every function returns a RunResult for one
 * run; the caller repeats and takes medians.
 *
 * Raw and package sides are timed at the same points by the amqplib probe (common.ts): the first
 * delivery handed to a consumer callback → the N-th ack written. Publishing is timed from the first
 * publish to the N-th confirm (raw) or the N-th msg reaching the next node (package and Node-RED
 * alone: after its confirm). The Node-RED-alone runs (nodered-alone.ts) are raw amqplib in the
 * package's Node-RED runtime, with the package flow's hops.
 */
import { performance } from 'node:perf_hooks';
import type { ChannelModel, ConsumeMessage } from 'amqplib';
import { Broker } from '../../test/helpers/broker';
import { brokerNode, configNode, consumerNode, tab, type Names } from '../../test/helpers/flows';
import { armProbe, brokerCpuUs, connect, errorText, probeCounts, probeResult, rawJsonPublisher, sleep, withTimeout, type Body, type RunResult } from './common';
import { batchedAcks, startNodeRedAlonePublisher, startThroughNodeRed } from './nodered-alone';
import { batchedSettler, rawHandler, sameWorkMsg, type Work } from './raw-consumer.cjs';
import { benchHooks, distLib, getNode, loadFlow, unloadFlow, type FlowNode, type LoadOptions, type Msg } from './nodered';

export interface Ctx {
  url: string;
  model: ChannelModel;
  body1k: Body;
}

/** Generous: a run that does not finish is a broken run, never a slow one. */
export const timeoutFor = (count: number): number => Math.max(60_000, count * 5);

// Flow nodes: test/helpers/flows.ts's builders, with the bench's topology (default exchange, 200 ms TTL).

export const benchBroker = (ctx: Pick<Ctx, 'url'>): FlowNode => brokerNode({ name: 'bench broker', url: ctx.url, reconnectMax: '30', managementUrl: '' });
export const benchConfig = (topo: Names, extra: Record<string, unknown> = {}): FlowNode => configNode(topo, { retryDelay: '200', ...extra });
export const benchConsumer = (wires: string[][], prefetch: number, extra: Record<string, unknown> = {}): FlowNode => consumerNode(wires, { prefetch: String(prefetch), ...extra });

export function settleNode(id: string, action: string, wires: string[][] = []): FlowNode {
  return { id, type: 'retry-settle', z: 'flow', action, reason: 'bench', wires };
}

/** Waits until a queue exists and has a consumer (test/helpers/broker.ts's wait, on the bench's connection). */
export async function waitForConsumer(queue: string): Promise<void> {
  const broker = await Broker.open();
  try {
    await broker.waitForConsumer(queue);
  } finally {
    await broker.cleanup();
  }
}

/** Lets the package declare its own topology (a consumer in a flow), so raw and package use the same queues. */
export async function declareTopology(ctx: Ctx, topo: Names): Promise<void> {
  await loadFlow([tab(), benchBroker(ctx), benchConfig(topo), benchConsumer([[]], 1)]);
  try {
    await waitForConsumer(topo.mainQueue);
  } finally {
    await unloadFlow();
  }
}

// Consume + ack -----------------------------------------------------------------------------------

/** A raw consumer with manual ack in this process; `work` as in raw-consumer.cjs's rawHandler. */
export async function rawConsume(_ctx: Ctx, { queue, count, prefetch, work = 'none' }: { queue: string; count: number; prefetch: number; work?: Work }): Promise<RunResult> {
  const model = await connect('bench raw consumer');
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(prefetch);
    const done = armProbe(count);
    await ch.consume(queue, rawHandler(ch, queue, work), { noAck: false });
    await withTimeout(done, timeoutFor(count), `raw consumer: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await model.close().catch(() => undefined);
  }
}

/**
 * Node-RED alone: raw amqplib doing the same work with batched acks (work 'msg-later-batched'), its
 * msg through one hop of the package's Node-RED runtime (bench-source → bench-sink, acked there).
 */
export async function nodeRedAloneConsume(_ctx: Ctx, { queue, count, prefetch }: { queue: string; count: number; prefetch: number }): Promise<RunResult> {
  const done = armProbe(count);
  const stop = await startThroughNodeRed({ queue, prefetch, hops: 1, settler: batchedAcks });
  try {
    await withTimeout(done, timeoutFor(count), `Node-RED alone consumer: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await stop();
  }
}

/** consumer → retry-settle(ack) in the Node-RED runtime; `consumer` / `config`: more properties of those nodes. */
export async function pkgConsume(
  ctx: Ctx,
  {
    topo,
    count,
    prefetch,
    consumer = {},
    config = {},
    ...load
  }: { topo: Names; count: number; prefetch: number; consumer?: Record<string, unknown>; config?: Record<string, unknown> } & Pick<LoadOptions, 'spies' | 'syncDelivery'>,
): Promise<RunResult> {
  const done = armProbe(count);
  await loadFlow([tab(), benchBroker(ctx), benchConfig(topo, config), benchConsumer([['ack']], prefetch, consumer), settleNode('ack', 'ack')], load);
  try {
    await withTimeout(done, timeoutFor(count), `package consumer: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await unloadFlow();
  }
}

/** The slice of the package's ConsumerSession (dist/lib) the bench drives. */
interface SessionLike {
  deliveries: {
    on(event: 'message', listener: (delivered: Msg) => void): void;
    on(event: 'error', listener: (text: string) => void): void;
    on(event: 'changed', listener: () => void): void;
    settle(deliveryId: string, action: 'ack' | 'retry'): Promise<unknown>;
  };
  on(event: 'error', listener: (text: string) => void): void;
  start(): void;
  stop(): Promise<void>;
}
type SessionClass = new (options: Record<string, unknown>) => SessionLike;

/** The package's ConsumerSession class (dist/lib), for the runs without Node-RED. */
export function consumerSessionClass(): SessionClass {
  return (distLib('consume/index') as { ConsumerSession: SessionClass }).ConsumerSession;
}

/**
 * The package's ConsumerSession (dist/lib) settling each delivery directly, no Node-RED routing:
 * what the package's own code costs per message. Its connection, topology and registry come from the
 * package's broker and config nodes, so the bench does not depend on their internal shapes.
 */
export async function sessionConsume(
  ctx: Ctx,
  { topo, count, prefetch, settleTimeoutMs = 60_000, onDelivered }: { topo: Names; count: number; prefetch: number; settleTimeoutMs?: number; onDelivered?: (delivered: Msg) => void },
): Promise<RunResult> {
  const ConsumerSession = consumerSessionClass();
  await loadFlow([tab(), benchBroker(ctx), benchConfig(topo)]);
  const broker = getNode('broker') as Msg;
  const config = getNode('config') as Msg;
  const user = { id: 'bench-session', status: (): undefined => undefined };
  const session = new ConsumerSession({
    connection: broker.connection,
    copies: broker.connection.publisher('settle'),
    topology: config.topology,
    prefetch,
    settleTimeoutMs,
    decode: 'auto',
    invalidBody: 'park',
  });
  const failures: Error[] = [];
  session.deliveries.on('message', (delivered) => {
    if (onDelivered) onDelivered(delivered);
    session.deliveries.settle(String(delivered.amqp.deliveryId), 'ack').catch((err: unknown) => failures.push(err as Error));
  });
  session.on('error', (text) => failures.push(new Error(text)));
  const done = armProbe(count);
  session.start();
  broker.register(user);
  try {
    await withTimeout(done, timeoutFor(count), `ConsumerSession: ${count} acks (got ${probeCounts().acks})`);
    if (failures.length > 0) throw failures[0]!;
    return probeResult();
  } finally {
    await session.stop().catch(() => undefined);
    await (broker.deregister(user) as Promise<void>).catch(() => undefined);
    await unloadFlow();
  }
}

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

/** Raw: for each delivery, a confirmed mandatory publish of the original + park headers, then the ack. */
export async function rawPark(_ctx: Ctx, { topo, count, prefetch }: { topo: Names; count: number; prefetch: number }): Promise<RunResult> {
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
        const options = { contentType: p.contentType as string, correlationId: p.correlationId as string, messageId: p.messageId as string, timestamp: p.timestamp as number, headers, persistent: true, mandatory: true };
        pub.publish('', topo.parkingQueue, m.content, options, (err: unknown) => {
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
export async function pkgPark(ctx: Ctx, { topo, count, prefetch }: { topo: Names; count: number; prefetch: number }): Promise<RunResult> {
  const done = armProbe(count);
  await loadFlow([tab(), benchBroker(ctx), benchConfig(topo), benchConsumer([['park']], prefetch), { id: 'park', type: 'park-publisher', z: 'flow', reason: 'bench', wires: [[]] }]);
  try {
    await withTimeout(done, timeoutFor(count), `package park: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await unloadFlow();
  }
}

// Publish with confirms ---------------------------------------------------------------------------

/** Times `run` (which handles `count` messages): wall time, this process's CPU and the broker's. */
export async function timed(count: number, run: () => Promise<unknown>): Promise<RunResult> {
  const broker0 = brokerCpuUs();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run();
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
}

export interface PublishCase {
  queue: string;
  count: number;
  window: number;
  payload: unknown;
}

/** Raw ConfirmChannel (rawJsonPublisher): payload JSON-encoded per message, retry-publish's options; `window` in flight. */
export async function rawPublish(_ctx: Ctx, { queue, count, window, payload }: PublishCase): Promise<RunResult> {
  const model = await connect('bench raw publisher');
  try {
    const publisher = await rawJsonPublisher(model, queue);
    const result = await timed(count, () =>
      withTimeout(
        new Promise<void>((resolve, reject) => {
          let sent = 0;
          let confirmed = 0;
          const one = (): void => {
            sent += 1;
            publisher.publish(payload, (err) => {
              if (err) {
                reject(err instanceof Error ? err : new Error(errorText(err)));
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
    if (publisher.returned() > 0) throw new Error(`${publisher.returned()} raw publishes returned unroutable`);
    return result;
  } finally {
    await model.close().catch(() => undefined);
  }
}

/**
 * Sends `count` msgs into a node with `window` in flight; a msg is done when `benchHooks.onSink`
 * sees it at the sink with id `sinkId`.
 */
function pump(count: number, window: number, send: () => void, sinkId = 'sink'): Promise<void> {
  return new Promise((resolve) => {
    let sent = 0;
    let completed = 0;
    benchHooks.onSink = (_msg, id) => {
      if (id !== sinkId) return;
      completed += 1;
      if (completed === count) resolve();
      else if (sent < count) {
        sent += 1;
        send();
      }
    };
    for (let k = 0; k < window && sent < count; k += 1) {
      sent += 1;
      send();
    }
  });
}

/**
 * Feeds the loaded flow's node `id` with node.receive({ payload }), `window` msgs in flight; a msg is
 * done when it reaches the sink. A few msgs untimed first (the package's first ones open its
 * connection's confirm channel), then `count` timed.
 */
async function pumpNode(id: string, what: string, { count, window, payload }: Omit<PublishCase, 'queue'>): Promise<RunResult> {
  const node = getNode(id);
  const send = (): void => node.receive({ payload });
  try {
    await withTimeout(pump(Math.min(window, 10), window, send), 30_000, `${what} warm-up (is the broker reachable?)`);
    return await timed(count, () => withTimeout(pump(count, window, send), timeoutFor(count), `${what} confirms`));
  } finally {
    benchHooks.onSink = undefined;
  }
}

/** retry-publish fed with node.receive(), `window` msgs in flight; a msg is done when it reaches the next node. */
export async function pkgPublish(ctx: Ctx, { queue, ...run }: PublishCase): Promise<RunResult> {
  await loadFlow([
    tab(),
    benchBroker(ctx),
    { id: 'pub', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', exchange: '', routingKey: queue, persistent: true, contentType: '', declareQueue: '', wires: [['sink']] },
    { id: 'sink', type: 'bench-sink', z: 'flow', wires: [] },
  ]);
  try {
    return await pumpNode('pub', 'retry-publish', run);
  } finally {
    await unloadFlow();
  }
}

/**
 * Node-RED alone: rawPublish's work (the same options, the same return check) done by a node fed the
 * same way as retry-publish, its msg sent on to the next node after the confirm: the package side's
 * hops without the package.
 */
export async function nodeRedAlonePublish(_ctx: Ctx, { queue, ...run }: PublishCase): Promise<RunResult> {
  const publisher = await startNodeRedAlonePublisher(queue);
  try {
    const result = await pumpNode(publisher.node, 'Node-RED alone publisher', run);
    if (publisher.returned() > 0) throw new Error(`${publisher.returned()} Node-RED alone publishes returned unroutable`);
    return result;
  } finally {
    await publisher.stop();
  }
}

// Node-RED's own cost -------------------------------------------------------------------------------

/**
 * bench-source → bench-sink (or → two sinks: fan-out, so Node-RED deep-clones the second copy), with
 * `window` msgs in flight, each built by `makeMsg()`. No broker, no package code: what Node-RED's
 * routing costs per msg in this runtime.
 */
export async function nodeRedPair({ count, window, makeMsg, fanout = false, spies = false }: { count: number; window: number; makeMsg: () => Msg; fanout?: boolean; spies?: boolean }): Promise<RunResult> {
  const wires = fanout ? [['sink', 'sink2']] : [['sink']];
  await loadFlow(
    [tab(), { id: 'src', type: 'bench-source', z: 'flow', wires }, { id: 'sink', type: 'bench-sink', z: 'flow', wires: [] }, { id: 'sink2', type: 'bench-sink', z: 'flow', wires: [] }],
    { spies },
  );
  const src = getNode('src') as Msg;
  try {
    return await timed(count, () => withTimeout(pump(count, window, () => src.emitMsg(makeMsg())), timeoutFor(count), 'Node-RED source → sink'));
  } finally {
    benchHooks.onSink = undefined;
    await unloadFlow();
  }
}
