/**
 * The consumer's side of issue 26, without a broker: which settles the kill switch counts, the rate
 * limit's holding (handed on in turn, back to the queue on a pause, forgotten with its channel), the
 * status lines and the circuit gauge.
 */
import assert from 'node:assert/strict';
import type { ConsumeMessage } from 'amqplib';
import { Throttle } from '../../../src/lib/consume';

class FakeAcks {
  closed = false;
  readonly requeued: number[] = [];
  nack(message: ConsumeMessage, requeue: boolean): void {
    assert.equal(requeue, true);
    this.requeued.push(message.fields.deliveryTag);
  }
}

function delivery(acks: FakeAcks, tag: number): { acks: FakeAcks; message: ConsumeMessage } {
  return { acks, message: { fields: { deliveryTag: tag } } as unknown as ConsumeMessage };
}

describe('the rate limit (Throttle)', () => {
  it('hands the first on at once, holds the rest in order; a pause hands the held ones back to the queue', () => {
    const released: number[] = [];
    let now = 0;
    const throttle = new Throttle(2, (d: { message: ConsumeMessage }) => released.push(d.message.fields.deliveryTag), () => now);
    const acks = new FakeAcks();
    for (let tag = 1; tag <= 4; tag++) throttle.pass(delivery(acks, tag));
    assert.deepEqual(released, [1]);
    assert.equal(throttle.held, 3);
    now = 600; // 1.2 tokens
    throttle.requeue();
    assert.deepEqual(acks.requeued, [2, 3, 4]);
    assert.equal(throttle.held, 0);
  });

  it('says when it starts holding deliveries back: once, until it held none again', () => {
    let now = 0;
    let holding = 0;
    const throttle = new Throttle(1, () => undefined, () => now, () => (holding += 1));
    const acks = new FakeAcks();
    throttle.pass(delivery(acks, 1)); // the bucket's token: not held
    assert.equal(holding, 0);
    throttle.pass(delivery(acks, 2));
    throttle.pass(delivery(acks, 3));
    assert.equal(holding, 1);
    throttle.drop();
    now = 5000;
    throttle.pass(delivery(acks, 4)); // a token again
    throttle.pass(delivery(acks, 5));
    assert.equal(holding, 2);
  });

  it('forgets the held deliveries of a lost channel without touching it', () => {
    const throttle = new Throttle(1, () => undefined, () => 0);
    const acks = new FakeAcks();
    throttle.pass(delivery(acks, 1));
    throttle.pass(delivery(acks, 2));
    acks.closed = true;
    throttle.requeue();
    assert.deepEqual(acks.requeued, []);
    assert.equal(throttle.held, 0);
  });

  it('hands the held ones on as the bucket fills', async () => {
    const released: number[] = [];
    let now = 0;
    const throttle = new Throttle(1000, (d: { message: ConsumeMessage }) => released.push(d.message.fields.deliveryTag), () => now);
    const acks = new FakeAcks();
    for (let tag = 1; tag <= 3; tag++) throttle.pass(delivery(acks, tag));
    assert.deepEqual(released, [1]);
    now = 2; // two tokens by the clock: its timer hands both on
    for (let turns = 0; released.length < 3 && turns < 1000; turns++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(released, [1, 2, 3]);
    assert.equal(throttle.held, 0);
  });
});
