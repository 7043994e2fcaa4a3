/**
 * A batch of publishes through one confirm publisher (sendBatch, the outbox relay's path) on the real
 * broker: each message's own outcome, a returned (unroutable) message failing alone while the others
 * of its batch are confirmed and arrive, mandatory set on every one.
 */
import assert from 'node:assert/strict';
import type { ConfirmChannel } from 'amqplib';
import { ConfirmPublisher, type BatchMessage, type PublishError } from '../../src/lib/publish';
import { Broker, uniqueName } from '../helpers/broker';

describe('a batch of publishes through one confirm publisher (real broker)', function () {
  let broker: Broker;
  let channel: ConfirmChannel;
  const queue = uniqueName('batch');
  const exchange = uniqueName('batch-ex');

  before(async () => {
    broker = await Broker.open();
    broker.track('queue', queue);
    broker.track('exchange', exchange);
    const ch = await broker.ch();
    await ch.assertQueue(queue, { durable: false });
    await ch.assertExchange(exchange, 'direct', { durable: false, autoDelete: false });
    await ch.bindQueue(queue, exchange, 'routed');
    channel = await broker.model.createConfirmChannel();
    channel.on('error', () => undefined);
  });

  after(async () => {
    await channel.close().catch(() => undefined);
    await broker.cleanup();
  });

  /** Publishes the batch; resolves with each message's outcome (failure kind, or 'ok'). */
  function sendBatch(publisher: ConfirmPublisher, keys: string[]): Promise<string[]> {
    return new Promise((resolve) => {
      const outcomes = new Array<string>(keys.length);
      let left = keys.length;
      // One object reused for every message, as the relay hands them.
      const into: BatchMessage = { exchange, routingKey: '', content: Buffer.alloc(0), options: {} };
      publisher.sendBatch(
        keys.length,
        (i) => {
          into.routingKey = keys[i]!;
          into.content = Buffer.from(`m${i}`);
          into.options = { messageId: `m${i}`, headers: { n: i } };
          return into;
        },
        (i: number, err: PublishError | undefined) => {
          assert.equal(outcomes[i], undefined, `message ${i} settled once`);
          outcomes[i] = err === undefined ? 'ok' : err.failure;
          if (--left === 0) resolve(outcomes);
        },
      );
    });
  }

  it('a batch with an unroutable message: that one fails as returned, the others are confirmed and arrive with their own headers', async () => {
    const publisher = new ConfirmPublisher(channel);
    const outcomes = await sendBatch(publisher, ['routed', 'routed', 'nowhere', 'routed']);
    assert.deepEqual(outcomes, ['ok', 'ok', 'unroutable', 'ok']);
    const arrived: Array<{ id: unknown; n: unknown }> = [];
    for (;;) {
      const m = await (await broker.ch()).get(queue, { noAck: true });
      if (m === false) break;
      arrived.push({ id: m.properties.messageId, n: (m.properties.headers as Record<string, unknown>).n });
    }
    assert.deepEqual(arrived, [
      { id: 'm0', n: 0 },
      { id: 'm1', n: 1 },
      { id: 'm3', n: 3 },
    ]);
  });

  it('batches and single publishes on one channel: each return goes to its own message', async () => {
    const publisher = new ConfirmPublisher(channel);
    const single = publisher.publish(exchange, 'nowhere', Buffer.from('m0'));
    const [outcomes] = await Promise.all([sendBatch(publisher, ['nowhere', 'routed']), assert.rejects(single, (err: PublishError) => err.failure === 'unroutable')]);
    assert.deepEqual(outcomes, ['unroutable', 'ok']);
    const m = await (await broker.ch()).get(queue, { noAck: true });
    assert.equal(m !== false && m.properties.messageId, 'm1');
  });
});
