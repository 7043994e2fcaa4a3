/**
 * Publishers without a broker: a fake connection whose confirm channels behave as amqplib's on a
 * connection that goes — the connection's `error` first, then each channel's `close`, whose own
 * listener (registered when amqplib built the channel) fails the unconfirmed publishes with "channel
 * closed". What a failed publish says then (issue 52, item 8: a copy's error said only "channel closed").
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ChannelModel, Options } from 'amqplib';
import { Publishers, type PublishError } from '../../../src/lib/publish';

type Callback = (err: unknown) => void;

/** A confirm channel as amqplib builds it: its own `close` listener first, failing what is unconfirmed. */
class AmqplibChannel extends EventEmitter {
  readonly unconfirmed: Callback[] = [];
  constructor() {
    super();
    this.on('close', () => {
      for (const callback of this.unconfirmed.splice(0)) callback(new Error('channel closed'));
    });
  }
  publish(_exchange: string, _routingKey: string, _content: Buffer, _options: Options.Publish, callback: Callback): boolean {
    this.unconfirmed.push(callback);
    return true;
  }
  close(): Promise<void> {
    this.emit('close');
    return Promise.resolve();
  }
}

/** A connection as amqplib's ChannelModel: `error` (lost), then its channels close, then `close`. */
class FakeModel extends EventEmitter {
  readonly channels: AmqplibChannel[] = [];
  createConfirmChannel(): Promise<AmqplibChannel> {
    const channel = new AmqplibChannel();
    this.channels.push(channel);
    return Promise.resolve(channel);
  }
  lose(err: Error): void {
    this.emit('error', err);
    for (const channel of this.channels) channel.emit('close');
    this.emit('close', err);
  }
  closeByClient(): void {
    for (const channel of this.channels) channel.emit('close');
    this.emit('close');
  }
}

/** A publish in flight on a fresh Publishers' `settle` channel. */
async function inFlight(): Promise<{ model: FakeModel; publishers: Publishers; copy: Promise<void> }> {
  const model = new FakeModel();
  const publishers = new Publishers(() => undefined);
  publishers.connected(model as unknown as ChannelModel);
  const settle = publishers.publisher('settle');
  const first = settle.publish('', 'first', Buffer.from('w')); // opens the channel
  for (let i = 0; i < 100 && model.channels[0]?.unconfirmed.length !== 1; i += 1) await new Promise((resolve) => setImmediate(resolve));
  model.channels[0]!.unconfirmed.splice(0).forEach((callback) => callback(null));
  await first;
  const copy = settle.publish('', 'orders.retry', Buffer.from('x'));
  assert.equal(model.channels[0]!.unconfirmed.length, 1, 'the copy is in flight');
  return { model, publishers, copy };
}

describe('Publishers', () => {
  it('a publish lost with its connection says why the connection went (the broker or the socket)', async () => {
    const { model, copy } = await inFlight();
    model.lose(new Error('Heartbeat timeout'));
    await assert.rejects(copy, (err: PublishError) => err.failure === 'channel-closed' && err.message === "publish to queue 'orders.retry' failed: channel closed: its connection was lost (Heartbeat timeout)");
  });

  it('a publish in flight when this client closes the connection says so', async () => {
    const { model, publishers, copy } = await inFlight();
    publishers.closed();
    model.closeByClient();
    await assert.rejects(copy, (err: PublishError) => err.message === "publish to queue 'orders.retry' failed: channel closed: this client closed the broker connection (its last node stopped)");
  });
});
