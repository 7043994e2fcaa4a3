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
import { tab, type Names } from '../../test/helpers/flows';
import { armProbe, connect, probeCounts, probeResult, withTimeout, type RunResult } from './common';
import { batchedAcks, startThroughNodeRed } from './nodered-alone';
import { rawHandler, type Work } from './raw-consumer.cjs';
import { distLib, getNode, loadFlow, unloadFlow, type LoadOptions, type Msg } from './nodered';
import { benchBroker, benchConfig, benchConsumer, settleNode, timeoutFor, type Ctx } from './scenario-base';

// The retry and publish runs, and what all runs build on, are in their own files; the sections take them from here.
export * from './scenario-base';
export * from './publish-scenarios';
export * from './retry-scenarios';

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
