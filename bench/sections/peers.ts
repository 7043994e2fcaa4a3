/** Other Node-RED AMQP packages: each contestant in its own process per run (lib/peers.ts). */
import type { Options } from 'amqplib';
import { AMQP_URL, median, messageProperties, purge } from '../lib/common';
import { BATCHED_PEER_KEY, preparePeers } from '../lib/peers';
import { PLAN, PREFETCH, log } from '../config';
import { summarize, variants } from '../harness';
import type { Bench, PeerRow, Variant } from '../types';

export async function peers(b: Bench): Promise<void> {
  const { model, admin, names, loadQueue } = b;
  const count = PLAN.peers;
  const warmUp = PLAN.peersWarmUp;
  const plain = names.queue('peers-plain');
  await admin.assertQueue(plain, { durable: true });
  const persistent = (i: number): Options.Publish => ({ ...messageProperties(i), deliveryMode: 2 });
  const prepared = await preparePeers({ url: AMQP_URL, plainQueue: plain, topology: names.topology('peers'), prefetch: PREFETCH, log });
  try {
    const list = prepared.contestants.map((c): Variant => [c.label, count, loadQueue(c.queue, 1024, warmUp + count, persistent), () => c.run(warmUp, count)]);
    const runs = await variants('peers', list);
    const rows = prepared.contestants.map((c, i): PeerRow => ({
      label: c.label,
      version: c.version(),
      ack: c.ack,
      key: c.key,
      ratio: NaN,
      batchedRatio: NaN,
      ...summarize(runs[i]!),
      warmUpCpuUsPerMsg: median(runs[i]!.map((r) => r.warmUpCpuUsPerMsg ?? NaN)),
      mainThreadUsPerMsg: median(runs[i]!.map((r) => r.mainThreadUsPerMsg ?? NaN)),
    }));
    const batched = rows.find((r) => r.key === BATCHED_PEER_KEY);
    for (const row of rows) {
      row.ratio = row.msgPerSec / rows[0]!.msgPerSec;
      row.batchedRatio = batched ? row.msgPerSec / batched.msgPerSec : NaN;
    }
    b.results.extra.peers = { rows, skipped: prepared.skipped };
  } finally {
    prepared.dispose();
    await purge(model, plain);
  }
}
