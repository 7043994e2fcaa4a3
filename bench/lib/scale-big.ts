/** The scale section's big-message and backlog parts (scale-scenarios.ts runs them). */
import type { ChannelModel, Options } from 'amqplib';
import { waitFor } from '../../test/helpers/broker';
import { tab } from '../../test/helpers/flows';
import { errorText, median, messageProperties, preload, purge, sleep, waitForCount, type RunResult } from './common';
import { deleteQueues, oneConsumerFlow, procRss, type ProbedRed } from './scale-red';
import { MB, type ScaleOptions, type ScaleResult } from './scale-table';
import * as S from './scenarios';

/** Raw amqplib publishing Buffers on a confirm channel, `window` in flight, persistent + mandatory. */
async function rawBufferPublish(model: ChannelModel, queue: string, count: number, window: number, content: Buffer): Promise<RunResult> {
  const ch = await model.createConfirmChannel();
  ch.on('error', () => undefined);
  try {
    return await S.timed(
      count,
      () =>
        new Promise<void>((resolve, reject) => {
          let sent = 0;
          let confirmed = 0;
          const one = (): void => {
            sent += 1;
            ch.publish('', queue, content, { contentType: 'application/octet-stream', persistent: true, mandatory: true }, (err: unknown) => {
              if (err) {
                reject(new Error(errorText(err)));
                return;
              }
              confirmed += 1;
              if (confirmed === count) resolve();
              else if (sent < count) one();
            });
          };
          for (let k = 0; k < window && sent < count; k += 1) one();
        }),
    );
  } finally {
    await ch.close().catch(() => undefined);
  }
}

export async function bigPart(o: ScaleOptions, result: ScaleResult): Promise<void> {
  // 20 MB: one publish in flight. With two, the second waits in the broker node's publish buffer
  // (16 MiB by default), which refuses it: a user raises "publish buffer (MiB)" for messages this large.
  const plan = o.smoke
    ? [{ size: MB, count: 10, prefetch: 4, window: 4 }]
    : [
        { size: MB, count: 60, prefetch: 10, window: 10 },
        { size: 20 * MB, count: 15, prefetch: 2, window: 1 },
      ];
  const reps = o.smoke ? 1 : Math.min(3, o.reps);
  const topo = o.names.topology('scale-big');
  const pubQueue = o.names.queue('scale-big-publish');
  await S.declareTopology(o.ctx, topo);
  const admin = await o.ctx.model.createChannel();
  await admin.assertQueue(pubQueue, { durable: true });
  await admin.close();
  try {
    for (const { size, count, prefetch, window } of plan) {
      const content = Buffer.alloc(size, 'x');
      const sizeText = `${size / MB} MB`;
      const binary = (i: number): Options.Publish => ({ ...messageProperties(i), contentType: 'application/octet-stream' });
      const load = async (): Promise<void> => {
        await purge(o.ctx.model, topo.mainQueue);
        await preload(o.ctx.model, topo.mainQueue, count, content, binary, 10);
        await waitForCount(o.ctx.model, topo.mainQueue, count);
      };
      const consume = { pkg: [] as number[], raw: [] as number[] };
      const publish = { pkg: [] as number[], raw: [] as number[] };
      for (let rep = 0; rep < reps; rep += 1) {
        await load();
        consume.raw.push((await S.rawConsume(o.ctx, { queue: topo.mainQueue, count, prefetch })).msgPerSec);
        await load();
        consume.pkg.push((await S.pkgConsume(o.ctx, { topo, count, prefetch })).msgPerSec);
        await purge(o.ctx.model, pubQueue);
        publish.raw.push((await rawBufferPublish(o.ctx.model, pubQueue, count, window, content)).msgPerSec);
        await purge(o.ctx.model, pubQueue);
        publish.pkg.push((await S.pkgPublish(o.ctx, { queue: pubQueue, count, window, payload: content })).msgPerSec);
        await purge(o.ctx.model, pubQueue);
        o.log(
          `   scale ${sizeText} #${rep + 1}: consume pkg ${consume.pkg.at(-1)!.toFixed(1)} / raw ${consume.raw.at(-1)!.toFixed(1)} msg/s, publish pkg ${publish.pkg.at(-1)!.toFixed(1)} / raw ${publish.raw.at(-1)!.toFixed(1)} msg/s`,
        );
      }
      result.big.push({ label: `${sizeText} consume → retry-settle ack, prefetch ${prefetch}`, size, count, pkg: median(consume.pkg), raw: median(consume.raw) });
      result.big.push({ label: `${sizeText} retry-publish + confirm, ${window} in flight`, size, count, pkg: median(publish.pkg), raw: median(publish.raw) });
    }
  } finally {
    await purge(o.ctx.model, topo.mainQueue).catch(() => undefined);
    await deleteQueues(o.ctx.model, [topo.mainQueue, topo.retryQueue, topo.parkingQueue, pubQueue]).catch(() => undefined);
  }
}

/** Preload with several confirm channels at once (persistent 1 KB). */
export async function fastPreload(model: ChannelModel, queue: string, count: number, body: Buffer): Promise<void> {
  const persistent = (i: number): Options.Publish => ({ ...messageProperties(i), deliveryMode: 2 });
  const lanes = 4;
  const per = Math.ceil(count / lanes);
  await Promise.all(Array.from({ length: lanes }, (_v, lane) => preload(model, queue, Math.max(0, Math.min(per, count - lane * per)), body, persistent, 2000)));
}

export async function backlogPart(o: ScaleOptions, red: ProbedRed, result: ScaleResult): Promise<void> {
  const count = o.smoke ? 20_000 : 1_000_000;
  const topo = o.names.topology('scale-backlog');
  await S.declareTopology(o.ctx, topo);
  try {
    const t0 = performance.now();
    await fastPreload(o.ctx.model, topo.mainQueue, count, Buffer.from(JSON.stringify(o.ctx.body1k)));
    await waitForCount(o.ctx.model, topo.mainQueue, count, 120_000);
    const preloadS = (performance.now() - t0) / 1000;
    o.log(`   scale backlog: ${count} persistent 1 KB messages preloaded in ${preloadS.toFixed(1)} s`);
    await red.report({ reset: true });
    const rssBefore = (await red.report({ gc: true })).rss;
    const ch = await o.ctx.model.createChannel();
    ch.on('error', () => undefined);
    const samples: Array<{ done: number; rss: number }> = [];
    const d0 = performance.now();
    try {
      await red.deploy(oneConsumerFlow(o.ctx.url, topo, 100));
      const deadline = Date.now() + Math.max(300_000, count * 2);
      for (;;) {
        await sleep(1000);
        const { messageCount } = await ch.checkQueue(topo.mainQueue);
        samples.push({ done: (count - messageCount) / count, rss: procRss(red.pid) });
        if (messageCount === 0) break;
        if (red.red.exited) throw new Error(`Node-RED exited${red.red.log()}`);
        if (Date.now() > deadline) throw new Error(`backlog: ${messageCount} messages left after ${Math.round((performance.now() - d0) / 1000)} s`);
      }
      await waitFor(async () => (await red.report()).deliveries >= count, `${count} deliveries`, 60_000);
    } finally {
      await ch.close().catch(() => undefined);
    }
    const report = await red.report();
    const drainS = (report.lastSettleAt - report.firstDeliveryAt) / 1000;
    const at = (p: number): number => (samples.find((s) => s.done >= p) ?? samples.at(-1)!).rss / MB;
    const running = samples.filter((s) => s.done > 0);
    const rssStart = (running[0] ?? samples[0]!).rss;
    const rssMax = Math.max(...samples.map((s) => s.rss));
    result.backlog = {
      count,
      preloadS,
      drainS,
      msgPerSec: count / drainS,
      rssBeforeMb: rssBefore / MB,
      rssStartMb: rssStart / MB,
      rssMaxMb: rssMax / MB,
      rssAtMb: [at(0.1), at(0.5), at(0.9)],
      growthMb: (rssMax - rssStart) / MB,
    };
    const b = result.backlog;
    o.log(
      `   scale backlog: drained in ${drainS.toFixed(1)} s (${Math.round(b.msgPerSec)} msg/s); rss idle ${b.rssBeforeMb.toFixed(1)}, first second ${b.rssStartMb.toFixed(1)}, at 10/50/90 % ${b.rssAtMb.map((x) => x.toFixed(1)).join(' / ')}, max ${b.rssMaxMb.toFixed(1)} MiB`,
    );
  } finally {
    await red.deploy([tab()]).catch(() => undefined);
    await deleteQueues(o.ctx.model, [topo.mainQueue, topo.retryQueue, topo.parkingQueue]).catch(() => undefined);
  }
}
