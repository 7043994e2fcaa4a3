/** Node-RED's own cost: msgs from a source node to a sink in the same runtime, no broker, no package. */
import type { Msg } from '../lib/nodered';
import * as S from '../lib/scenarios';
import { PLAN, WINDOW } from '../config';
import { analysisVariants } from '../harness';
import type { Bench } from '../types';

/** What retry-consumer sends for a first delivery (see README "retry-consumer"), when the analysis section captured none. */
function madeUpMsg(payload: unknown): Msg {
  return {
    payload,
    topic: 'bench.consume',
    amqp: {
      deliveryId: 'config:1',
      queue: 'bench.consume',
      exchange: '',
      routingKey: 'bench.consume',
      redelivered: false,
      deliveryTag: 1,
      consumerTag: 'amq.ctag-bench',
      properties: { contentType: 'application/json', deliveryMode: 1, correlationId: 'c-1', messageId: 'm-1', timestamp: 1714564800 },
      headers: { source: 'bench' },
    },
    retry: { attempt: 1, maxAttempts: 3, remaining: 2, firstDeathReason: null, deaths: [] },
  };
}

export async function nodered(b: Bench): Promise<void> {
  const count = PLAN.nodered;
  const payload = JSON.parse(JSON.stringify(b.ctx.body1k));
  const template: Msg = b.capturedMsg ?? madeUpMsg(payload);
  const consumerShaped = (): Msg => ({ payload: template.payload, topic: template.topic, amqp: template.amqp, retry: template.retry });
  const minimal = (): Msg => ({ payload: 'x' });
  const none = (): Promise<void> => Promise.resolve();
  const spyCount = Math.min(count, 10000);
  await analysisVariants(b.results, 'Node-RED only', [
    ['source → sink, consumer-shaped msg (no broker, no package)', count, none, () => S.nodeRedPair({ count, window: WINDOW, makeMsg: consumerShaped })],
    ['source → sink, {payload:"x"}', count, none, () => S.nodeRedPair({ count, window: WINDOW, makeMsg: minimal })],
    ['source → 2 sinks (fan-out: 1 deep clone), consumer-shaped msg', count, none, () => S.nodeRedPair({ count, window: WINDOW, makeMsg: consumerShaped, fanout: true })],
    ['source → 2 sinks (fan-out), {payload:"x"}', count, none, () => S.nodeRedPair({ count, window: WINDOW, makeMsg: minimal, fanout: true })],
    ["source → sink, consumer-shaped, test helper's spies kept", spyCount, none, () => S.nodeRedPair({ count: spyCount, window: WINDOW, makeMsg: consumerShaped, spies: true })],
  ]);
}
