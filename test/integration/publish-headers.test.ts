/**
 * Every publish goes to amqplib with its headers lent on one reused object (HeaderCarrier): a burst of
 * publishes with different headers, not awaited one by one, arrives at the broker with each message's
 * own headers — nothing of one message's headers on another's (real broker).
 */
import assert from 'node:assert/strict';
import type { ConfirmChannel } from 'amqplib';
import { ConfirmPublisher } from '../../src/lib/publish';
import { Broker, uniqueName } from '../helpers/broker';

describe('headers of a burst of publishes through one publisher (real broker)', function () {
  let broker: Broker;
  let channel: ConfirmChannel;
  const queue = uniqueName('carrier');

  before(async () => {
    broker = await Broker.open();
    broker.track('queue', queue);
    await (await broker.ch()).assertQueue(queue, { durable: false });
    channel = await broker.model.createConfirmChannel();
    channel.on('error', () => undefined);
  });

  after(async () => {
    await channel.close().catch(() => undefined);
    await broker.cleanup();
  });

  it('each message carries exactly its own headers, across the carrier starting over', async () => {
    const publisher = new ConfirmPublisher(channel);
    const COUNT = 1200;
    /** Shared names, names of one message only (more than the carrier holds before starting over), nested tables, no headers. */
    const headersOf = (i: number): Record<string, unknown> | undefined =>
      i % 10 === 9
        ? undefined
        : {
            traceparent: `00-${i.toString(16).padStart(32, '0')}-${'1'.repeat(16)}-01`,
            ...(i % 2 === 0 ? { 'x-retry-attempt': i } : { tracestate: `k=${i}` }),
            [`only-${i}`]: `value ${i}`,
            ...(i % 3 === 0 ? { table: { at: i, list: [i, `${i}`] } } : {}),
          };
    await Promise.all(Array.from({ length: COUNT }, (_, i) => publisher.publish('', queue, Buffer.from(String(i)), { messageId: String(i), headers: headersOf(i) })));
    for (let n = 0; n < COUNT; n += 1) {
      const message = await broker.take(queue);
      const i = Number(message.properties.messageId);
      const got = Object.fromEntries(Object.entries((message.properties.headers ?? {}) as Record<string, unknown>).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString() : v]));
      const table = got.table as { list?: unknown[] } | undefined;
      if (table?.list) table.list = table.list.map((v) => (Buffer.isBuffer(v) ? v.toString() : v));
      assert.deepEqual(got, headersOf(i) ?? {}, `message ${i}`);
    }
  });
});
