/**
 * Where the time goes: single-sided consume runs from raw amqplib with ack only up to the package
 * nodes in Node-RED, step by step. Captures a real first-delivery msg for the nodered section.
 */
import * as S from '../lib/scenarios';
import type { Msg } from '../lib/nodered';
import { PLAN, PREFETCH, kb, want, wantCase } from '../config';
import { analysisVariants } from '../harness';
import type { Bench, Prepare, Run, Variant } from '../types';

type PkgOptions = Omit<Parameters<typeof S.pkgConsume>[1], 'topo' | 'count' | 'prefetch'>;

/** The variants of one body size (some only at 1 KB). */
function sizeVariants(b: Bench, size: number, count: number): Variant[] {
  const { ctx, consumeTopo, load } = b;
  const q = consumeTopo.mainQueue;
  const prep: Prepare = load(consumeTopo, size, count);
  const pkg =
    (options: PkgOptions = {}): Run =>
    () =>
      S.pkgConsume(ctx, { topo: consumeTopo, count, prefetch: PREFETCH, ...options });
  const capture = (d: Msg): void => {
    b.capturedMsg ??= { payload: d.payload, topic: d.amqp.routingKey, amqp: d.amqp, retry: d.retry };
  };
  const list: Variant[] = [
    ['raw amqplib, ack only', count, prep, () => S.rawConsume(ctx, { queue: q, count, prefetch: PREFETCH })],
    ['raw amqplib + JSON.parse of the body', count, prep, () => S.rawConsume(ctx, { queue: q, count, prefetch: PREFETCH, work: 'parse' })],
    ['raw amqplib + JSON.parse + the same msg (same work)', count, prep, () => S.rawConsume(ctx, { queue: q, count, prefetch: PREFETCH, work: 'msg' })],
    ['raw amqplib, same work, acked one setImmediate later (as a flow)', count, prep, () => S.rawConsume(ctx, { queue: q, count, prefetch: PREFETCH, work: 'msg-later' })],
  ];
  if (size === 1024) {
    list.push(
      ['package ConsumerSession (dist/lib), settle ack, no Node-RED', count, prep, () => S.sessionConsume(ctx, { topo: consumeTopo, count, prefetch: PREFETCH, onDelivered: capture })],
      ['package ConsumerSession, settle timeout 0 (no timer)', count, prep, () => S.sessionConsume(ctx, { topo: consumeTopo, count, prefetch: PREFETCH, settleTimeoutMs: 0 })],
    );
  }
  list.push(
    ['package nodes in Node-RED (consumer → retry-settle)', count, prep, pkg()],
    ["package nodes, decode 'buffer' (no JSON.parse)", count, prep, pkg({ consumer: { decode: 'buffer' } })],
  );
  if (size === 1024) {
    const spyCount = Math.min(count, 5000);
    list.push(
      ['package nodes, Node-RED runtimeSyncDelivery: true', count, prep, pkg({ syncDelivery: true })],
      ["package nodes, test helper's sinon spies kept", spyCount, load(consumeTopo, size, spyCount), () => S.pkgConsume(ctx, { topo: consumeTopo, count: spyCount, prefetch: PREFETCH, spies: true })],
    );
  }
  return list;
}

export async function analysis(b: Bench): Promise<void> {
  if (!want('consume')) await S.declareTopology(b.ctx, b.consumeTopo);
  for (const [size, count] of [
    [1024, PLAN.analysis],
    [16384, PLAN.analysis16k],
  ] as const) {
    if (!wantCase(size)) continue;
    await analysisVariants(b.results, `consume ${kb(size)}`, sizeVariants(b, size, count));
  }
}
