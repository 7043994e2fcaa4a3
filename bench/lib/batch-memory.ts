/**
 * What one batch held in a flow adds to the process (issue 51: a batch of 5 000 × 1 KB items adds at
 * most 2× its payload bytes): the package's consumer in batch mode (one batch of `items`) → a node
 * that holds the batch msg → retry-settle ack, in this process; and, beside it, a raw amqplib consumer
 * holding the same deliveries and their decoded bodies (the least any consumer holding a batch holds).
 * Each measured after a full GC before the messages are published and again while the batch is held:
 * the growth of the V8 heap plus the memory outside it (Buffers), and of the RSS.
 */
import type { ChannelModel, ConsumeMessage } from 'amqplib';
import type { Names } from '../../test/helpers/flows';
import { tab } from '../../test/helpers/flows';
import { armProbe, connect, fullGc, preload, sleep, withTimeout } from './common';
import { benchHooks, loadFlow, unloadFlow, type Msg } from './nodered';
import { benchBroker, benchConfig, benchConsumer, settleNode, waitForConsumer, type Ctx } from './scenarios';

export interface HeldMemory {
  /** Heap used + external (Buffers) growth, bytes. */
  grown: number;
  rssGrown: number;
}

export interface BatchMemory {
  items: number;
  /** The items' message bodies, bytes. */
  payloadBytes: number;
  pkg: HeldMemory;
  raw: HeldMemory;
}

const usage = (): { held: number; rss: number } => {
  fullGc();
  const m = process.memoryUsage();
  return { held: m.heapUsed + m.external, rss: m.rss };
};

const grownSince = (before: { held: number; rss: number }): HeldMemory => {
  const now = usage();
  return { grown: now.held - before.held, rssGrown: now.rss - before.rss };
};

/** The package: one batch of `items` held in the flow, then released to its ack. */
async function pkgHeld(ctx: Ctx, model: ChannelModel, topo: Names, items: number, body: Buffer): Promise<HeldMemory> {
  let release: (() => void) | undefined;
  const held = new Promise<void>((resolve) => {
    benchHooks.onInput = (msg: Msg, send, done) => {
      release = () => {
        send(msg);
        done();
      };
      resolve();
    };
  });
  await loadFlow([tab(), benchBroker(ctx), benchConfig(topo), benchConsumer([['hold']], 1, { batch: true, batchSize: String(items), batchWait: '60000' }), { id: 'hold', type: 'bench-call', z: 'flow', wires: [['ack']] }, settleNode('ack', 'ack')]);
  try {
    await waitForConsumer(topo.mainQueue);
    await sleep(300);
    const acked = armProbe(items);
    const before = usage();
    await preload(model, topo.mainQueue, items, body);
    await withTimeout(held, 60_000, `a batch msg of ${items} items`);
    const grown = grownSince(before);
    release?.();
    await withTimeout(acked, 60_000, `${items} acks of the held batch`);
    return grown;
  } finally {
    benchHooks.onInput = undefined;
    await unloadFlow();
  }
}

/** Raw amqplib: the same deliveries held with their decoded bodies, then acked at once (multiple). */
async function rawHeld(model: ChannelModel, queue: string, items: number, body: Buffer): Promise<HeldMemory> {
  const consumer = await connect('bench raw batch holder');
  try {
    const ch = await consumer.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(items);
    const batch: Array<{ m: ConsumeMessage; payload: unknown }> = [];
    let full: () => void = () => undefined;
    const filled = new Promise<void>((resolve) => {
      full = resolve;
    });
    await ch.consume(queue, (m) => {
      if (m === null) return;
      batch.push({ m, payload: JSON.parse(m.content.toString('utf8')) });
      if (batch.length === items) full();
    });
    await sleep(300);
    const before = usage();
    await preload(model, queue, items, body);
    await withTimeout(filled, 60_000, `${items} deliveries held by raw amqplib`);
    const grown = grownSince(before);
    ch.ack((batch[batch.length - 1] as { m: ConsumeMessage }).m, true);
    batch.length = 0;
    return grown;
  } finally {
    await consumer.close().catch(() => undefined);
  }
}

export async function batchMemory(ctx: Ctx, { model, topo, items, body }: { model: ChannelModel; topo: Names; items: number; body: Buffer }): Promise<BatchMemory> {
  const pkg = await pkgHeld(ctx, model, topo, items, body);
  const raw = await rawHeld(model, topo.mainQueue, items, body);
  return { items, payloadBytes: items * body.length, pkg, raw };
}
