/**
 * The floor of batch mode's client CPU per item (issue 51): a raw amqplib consumer at prefetch
 * 2 × the batch size that collects its deliveries into batches of `size` (a partial one after the
 * batch wait), decodes each body (JSON, as the package does for application/json) and settles a
 * batch with one `multiple` ack of its last delivery. No msg, no Node-RED, no settle bookkeeping:
 * what any consumer of the same batches pays (amqplib's frame parsing, the decode, one ack frame).
 */
import type { ConsumeMessage } from 'amqplib';
import { armProbe, connect, probeCounts, probeResult, withTimeout, type RunResult } from './common';
import { BATCH_SIZE, BATCH_WAIT_MS } from './batch-scenarios';
import { timeoutFor } from './scenarios';

export async function rawBatchConsume({ queue, count, size = BATCH_SIZE, decode = true }: { queue: string; count: number; size?: number; decode?: boolean }): Promise<RunResult> {
  const model = await connect('bench raw batch floor');
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(2 * size);
    let items: ConsumeMessage[] = [];
    let payloads: unknown[] = [];
    let timer: NodeJS.Timeout | undefined;
    const flush = (): void => {
      clearTimeout(timer);
      timer = undefined;
      const last = items[items.length - 1];
      // The batch is handed on and dropped (as by a flow that acks at once): V8 still does the decode.
      items = [];
      payloads = [];
      if (last) ch.ack(last, true);
    };
    const done = armProbe(count);
    await ch.consume(queue, (m) => {
      if (m === null) return;
      items.push(m);
      payloads.push(decode ? JSON.parse(m.content.toString('utf8')) : m.content);
      if (items.length >= size) flush();
      else timer ??= setTimeout(flush, BATCH_WAIT_MS);
    });
    await withTimeout(done, timeoutFor(count), `raw batch consumer: ${count} acks (got ${probeCounts().acks})`);
    clearTimeout(timer);
    return probeResult();
  } finally {
    await model.close().catch(() => undefined);
  }
}
