/**
 * What one batch held in a flow adds to the process (issue 51: a batch of 5 000 × 1 KB items adds at
 * most 2× its payload bytes): the package's consumer in batch mode (one batch of `items`) → a node
 * that holds the batch msg → retry-settle ack, in this process; and, beside it, a raw amqplib consumer
 * holding the same deliveries and their decoded bodies (the least any consumer holding a batch holds).
 * Each side in a process of its own (batch-memory-child.ts), so what an earlier side or section left
 * behind, freed meanwhile, cannot offset the growth (measured in one process, the side after another
 * read anything from 0 to its true figure). Each measured after a full GC before the messages are published and again while the batch is held:
 * the growth of the V8 heap plus the memory outside it (Buffers), and of the RSS. Both also with the
 * bodies kept as Buffers (the consumer's decode `buffer`; raw: the delivery's content), where no
 * decoded copy is held: what the package holds per item beyond the body itself.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ChannelModel, ConsumeMessage } from 'amqplib';
import type { Names } from '../../test/helpers/flows';
import { tab } from '../../test/helpers/flows';
import { armProbe, connect, fullGc, preload, purge, sleep, withTimeout } from './common';
import { benchHooks, loadFlow, unloadFlow, type Msg } from './nodered';
import { benchBroker, benchConfig, benchConsumer, settleNode, waitForConsumer, type Ctx } from './scenarios';

const execFileAsync = promisify(execFile);

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
  /** The same with the bodies kept as Buffers, not decoded. */
  pkgBuffer: HeldMemory;
  rawBuffer: HeldMemory;
}

/**
 * After a full GC, and again once the turn after it ran: V8 frees the Buffers' memory a collection
 * found dead on a thread of its own after it, and a connection closed just before (the last side's)
 * lets go of its socket's buffers in a later turn, so one GC read at once still counts either.
 */
const usage = async (): Promise<{ held: number; rss: number }> => {
  fullGc();
  await sleep(100);
  fullGc();
  const m = process.memoryUsage();
  return { held: m.heapUsed + m.external, rss: m.rss };
};

const grownSince = async (before: { held: number; rss: number }): Promise<HeldMemory> => {
  const now = await usage();
  return { grown: now.held - before.held, rssGrown: now.rss - before.rss };
};

/** The package: one batch of `items` held in the flow, then released to its ack; `decode` the consumer's. */
async function pkgHeld(ctx: Ctx, model: ChannelModel, topo: Names, items: number, body: Buffer, decode: 'auto' | 'buffer'): Promise<HeldMemory> {
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
  await loadFlow([tab(), benchBroker(ctx), benchConfig(topo), benchConsumer([['hold']], 1, { batch: true, batchSize: String(items), batchWait: '60000', decode }), { id: 'hold', type: 'bench-call', z: 'flow', wires: [['ack']] }, settleNode('ack', 'ack')]);
  try {
    await waitForConsumer(topo.mainQueue);
    await sleep(300);
    const acked = armProbe(items);
    const before = await usage();
    await preload(model, topo.mainQueue, items, body);
    await withTimeout(held, 60_000, `a batch msg of ${items} items`);
    const grown = await grownSince(before);
    release?.();
    await withTimeout(acked, 60_000, `${items} acks of the held batch`);
    return grown;
  } finally {
    benchHooks.onInput = undefined;
    await unloadFlow();
  }
}

/** Raw amqplib: the same deliveries held with their decoded bodies (`decode`, else the content Buffer), then acked at once (multiple). */
async function rawHeld(model: ChannelModel, queue: string, items: number, body: Buffer, decode: boolean): Promise<HeldMemory> {
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
      batch.push({ m, payload: decode ? JSON.parse(m.content.toString('utf8')) : m.content });
      if (batch.length === items) full();
    });
    await sleep(300);
    const before = await usage();
    await preload(model, queue, items, body);
    await withTimeout(filled, 60_000, `${items} deliveries held by raw amqplib`);
    const grown = await grownSince(before);
    ch.ack((batch[batch.length - 1] as { m: ConsumeMessage }).m, true);
    batch.length = 0;
    return grown;
  } finally {
    await consumer.close().catch(() => undefined);
  }
}

export type HeldSide = 'pkg' | 'raw' | 'pkgBuffer' | 'rawBuffer';

/** One side, measured in this process (the child's part). */
export function heldSide(side: HeldSide, ctx: Ctx, model: ChannelModel, topo: Names, items: number, body: Buffer): Promise<HeldMemory> {
  if (side === 'pkg' || side === 'pkgBuffer') return pkgHeld(ctx, model, topo, items, body, side === 'pkg' ? 'auto' : 'buffer');
  return rawHeld(model, topo.mainQueue, items, body, side === 'raw');
}

/** One side in a child process of its own: its last stdout line is the HeldMemory as JSON. */
async function inChild(side: HeldSide, topo: Names, items: number, body: Buffer): Promise<HeldMemory> {
  const { stdout } = await execFileAsync(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(__dirname, 'batch-memory-child.ts')], {
    env: { ...process.env, BENCH_BATCH_MEM: JSON.stringify({ side, topo, items, body: body.toString('base64') }) },
    maxBuffer: 16 * 1024 * 1024,
    timeout: 180_000,
  });
  const last = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as HeldMemory;
}

export async function batchMemory(_ctx: Ctx, { model, topo, items, body }: { model: ChannelModel; topo: Names; items: number; body: Buffer }): Promise<BatchMemory> {
  // Each side from an empty queue: deliveries an earlier process left unacked at its exit come back to the
  // queue once the broker saw its connection go, and a side that got them at once would measure nothing.
  const side = async (which: HeldSide): Promise<HeldMemory> => {
    await sleep(500);
    await purge(model, topo.mainQueue);
    return inChild(which, topo, items, body);
  };
  const pkg = await side('pkg');
  const raw = await side('raw');
  const pkgBuffer = await side('pkgBuffer');
  const rawBuffer = await side('rawBuffer');
  return { items, payloadBytes: items * body.length, pkg, raw, pkgBuffer, rawBuffer };
}
