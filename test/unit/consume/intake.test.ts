/**
 * The intake (step 1 of the walk) without a broker: deliveries of the session's current channel reach
 * its deliveries with their attempt counted; one of a channel let go of is only noted, so the broker
 * requeues it; the rate limit holds the rest unacked and gives them back on a pause.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { Deliveries } from '../../../src/lib/consume/deliveries';
import { Intake } from '../../../src/lib/consume/intake';
import type { RetryInfo } from '../../../src/lib/message';
import type { AckBatcher } from '../../../src/lib/settle';

function message(tag: number, headers: Record<string, unknown> = {}): ConsumeMessage {
  return { content: Buffer.from('{}'), fields: { deliveryTag: tag, redelivered: false, exchange: '', routingKey: 'q', consumerTag: 'c' }, properties: { headers } } as unknown as ConsumeMessage;
}

function setup(options: { rateLimit?: number; delayedRetry?: 'queues' | 'broker' } = {}) {
  const arrived: Array<{ tag: number; retry: RetryInfo }> = [];
  const deliveries = { arrived: (_acks: AckBatcher, m: ConsumeMessage, retry: RetryInfo) => arrived.push({ tag: m.fields.deliveryTag, retry }) } as unknown as Deliveries;
  const noted: string[] = [];
  const acks = {
    closed: false,
    arrived: (m: ConsumeMessage) => noted.push(`arrived ${m.fields.deliveryTag}`),
    nack: (m: ConsumeMessage, requeue: boolean) => noted.push(`nack ${m.fields.deliveryTag}${requeue ? ' requeue' : ''}`),
  } as unknown as AckBatcher;
  const current = new EventEmitter() as unknown as Channel;
  const old = new EventEmitter() as unknown as Channel;
  let holding = 0;
  const intake = new Intake({ mainQueue: 'q', maxAttempts: 3, delayedRetry: options.delayedRetry ?? 'queues' }, options.rateLimit, deliveries, undefined, (ch) => ch === current, () => (holding += 1));
  return { intake, arrived, noted, acks, current, old, holding: () => holding };
}

describe('intake', () => {
  it('hands a delivery of the current channel to the deliveries, its first attempt counted', () => {
    const { intake, arrived, noted, acks, current } = setup();
    intake.arrived(current, acks, message(1));
    assert.deepEqual(arrived.map((a) => [a.tag, a.retry.attempt, a.retry.remaining]), [[1, 1, 2]]);
    assert.deepEqual(noted, [], 'the deliveries note it on its acks themselves');
  });

  it('counts the attempt from x-death of the main queue, or from the broker\'s delivery count with broker-native retry', () => {
    const deaths = { 'x-death': [{ queue: 'q', reason: 'rejected', count: 2, exchange: '', 'routing-keys': ['q'] }] };
    const queues = setup();
    queues.intake.arrived(queues.current, queues.acks, message(1, deaths));
    assert.equal(queues.arrived[0]?.retry.attempt, 3);
    const broker = setup({ delayedRetry: 'broker' });
    broker.intake.arrived(broker.current, broker.acks, message(1, { 'x-delivery-count': 1 }));
    assert.equal(broker.arrived[0]?.retry.attempt, 2);
  });

  it('only notes a delivery of a channel let go of (paused, stopping, lost): the broker requeues it', () => {
    const { intake, arrived, noted, acks, old } = setup();
    intake.arrived(old, acks, message(7));
    assert.deepEqual(arrived, []);
    assert.deepEqual(noted, ['arrived 7']);
  });

  it('is the consume callback: a delivery goes in, null (the broker cancelled the consumer) says which channel', () => {
    const { intake, arrived, acks, current } = setup();
    const cancelled: Channel[] = [];
    const callback = intake.consumer(current, acks, (ch) => cancelled.push(ch));
    callback(message(1));
    callback(null);
    assert.equal(arrived.length, 1);
    assert.deepEqual(cancelled, [current]);
  });

  it('with a rate limit, holds what exceeds it unacked, and gives it back to the queue when the consumer stops taking messages', () => {
    const { intake, arrived, noted, acks, current, holding } = setup({ rateLimit: 1 });
    for (let tag = 1; tag <= 4; tag += 1) intake.arrived(current, acks, message(tag));
    assert.equal(arrived.length + intake.held, 4);
    assert.ok(intake.held > 0, 'a rate of 1/s holds some of four at once');
    assert.equal(holding(), 1, 'said once when it starts holding');
    assert.deepEqual(noted.slice(0, 4), ['arrived 1', 'arrived 2', 'arrived 3', 'arrived 4'], 'each noted on arrival: no multiple ack covers a held one');
    const held = intake.held;
    intake.requeue();
    assert.equal(intake.held, 0);
    assert.equal(noted.filter((n) => n.startsWith('nack')).length, held);
    assert.ok(noted.filter((n) => n.startsWith('nack')).every((n) => n.endsWith('requeue')));
  });
});
