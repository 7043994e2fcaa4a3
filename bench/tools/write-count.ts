/**
 * Counts socket writes per acked message (amqplib's Mux → socket), raw amqplib vs the package's
 * consume+ack flow: acks written one frame per socket write cost a syscall each.
 *
 *   npm run build && node --expose-gc --import tsx bench/tools/write-count.ts [count] [prefetch] [size]
 */
import path from 'node:path';
import { AMQP_URL, NameBook, connect, installProbe, makeBody, preload, purge, waitForCount, runTool } from '../lib/common';
import { packageNodes } from '../lib/nodered';
import * as S from '../lib/scenarios';

const [countArg, prefetchArg, sizeArg] = process.argv.slice(2);
const count = Number(countArg ?? 20_000);
const prefetch = Number(prefetchArg ?? 100);
const size = Number(sizeArg ?? 1024);

interface MuxLike {
  out: { write(chunk: Buffer): boolean };
  _readIncoming(): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- amqplib internals, to count writes
const { Mux } = require(path.join(path.dirname(require.resolve('amqplib')), 'lib/mux.js')) as { Mux: { prototype: MuxLike } };
let writes = 0;
let bytes = 0;
const wrapped = new WeakSet();
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with the mux as `this`
const readIncoming = Mux.prototype._readIncoming;
Mux.prototype._readIncoming = function counted(this: MuxLike): void {
  if (!wrapped.has(this.out)) {
    wrapped.add(this.out);
    const out = this.out;
    const write = out.write.bind(out);
    out.write = (chunk: Buffer): boolean => {
      writes += 1;
      bytes += chunk.length;
      return write(chunk);
    };
  }
  readIncoming.call(this);
};

async function main(): Promise<void> {
  packageNodes();
  const names = new NameBook('bench-writes');
  const model = await connect('bench write-count admin');
  const admin = await model.createChannel();
  installProbe(admin);
  const ctx: S.Ctx = { url: AMQP_URL, model, body1k: makeBody(1024) };
  const topo = names.topology('writes');
  const body = Buffer.from(JSON.stringify(makeBody(size)));
  try {
    await S.declareTopology(ctx, topo);
    for (const [label, run] of [
      ['raw amqplib', () => S.rawConsume(ctx, { queue: topo.mainQueue, count, prefetch })],
      ['package', () => S.pkgConsume(ctx, { topo, count, prefetch })],
    ] as const) {
      await purge(model, topo.mainQueue);
      await preload(model, topo.mainQueue, count, body);
      await waitForCount(model, topo.mainQueue, count);
      writes = 0;
      bytes = 0;
      const r = await run();
      process.stdout.write(`${label.padEnd(12)} ${(writes / count).toFixed(3)} socket writes/msg, ${(bytes / count).toFixed(1)} B/msg written, ${Math.round(r.msgPerSec)} msg/s, ${r.cpuUsPerMsg.toFixed(1)} µs/msg\n`);
    }
  } finally {
    await names.cleanup();
    await model.close().catch(() => undefined);
  }
}

runTool(main);
