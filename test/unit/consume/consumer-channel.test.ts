/** The parts a ConsumerSession owns, each on its own: why it pauses, its setups' re-checks, its channel. */
import assert from 'node:assert/strict';
import type { Channel } from 'amqplib';
import { ConsumerChannel } from '../../../src/lib/consume/consumer-channel';

/** A channel that records what is asked of it. */
function fakeChannel(log: string[]): Channel {
  const channel = {
    prefetch: (n: number) => Promise.resolve(void log.push(`prefetch ${n}`)),
    consume: (queue: string) => Promise.resolve((log.push(`consume ${queue}`), { consumerTag: 'ctag' })),
    cancel: (tag: string) => (log.push(`cancel ${tag}`), tag === 'fail' ? Promise.reject(new Error('closed')) : Promise.resolve({ consumerTag: tag })),
    ack: () => log.push('ack'),
    ackAll: () => log.push('ackAll'),
    nack: () => log.push('nack'),
    close: () => Promise.resolve(void log.push('close')),
    once: () => channel,
    on: () => channel,
    off: () => channel,
    removeListener: () => channel,
  };
  return channel as unknown as Channel;
}

describe('ConsumerChannel', () => {
  const none = (): void => undefined;

  it('sets the prefetch (basic.qos) only when it changes, and again on a new channel', async () => {
    const log: string[] = [];
    const own = new ConsumerChannel();
    const channel = fakeChannel(log);
    own.take(channel);
    await own.consume(channel, 'q', 10, none);
    await own.cancel();
    await own.consume(channel, 'q', 10, none);
    await own.cancel();
    await own.consume(channel, 'q', 1, none);
    own.take(channel);
    await own.consume(channel, 'q', 1, none);
    assert.deepEqual(log, ['prefetch 10', 'consume q', 'cancel ctag', 'consume q', 'cancel ctag', 'prefetch 1', 'consume q', 'prefetch 1', 'consume q']);
  });

  it('cancel: a consumer once, nothing without one, a failed cancel let be', async () => {
    const log: string[] = [];
    const own = new ConsumerChannel();
    assert.equal(own.cancel(), undefined);
    const channel = fakeChannel(log);
    own.take(channel);
    assert.equal(own.cancel(), undefined);
    await own.consume(channel, 'q', 1, none);
    assert.equal(own.consuming, true);
    await own.cancel();
    assert.equal(own.consuming, false);
    assert.equal(own.cancel(), undefined);
    assert.equal(own.channel, channel);
    const failing = { ...channel, consume: () => Promise.resolve({ consumerTag: 'fail' }) } as unknown as Channel;
    own.take(failing);
    await own.consume(failing, 'q', 1, none);
    await own.cancel(); // does not reject
    assert.deepEqual(log.filter((l) => l.startsWith('cancel')), ['cancel ctag', 'cancel fail']);
  });

  it('release lets go without closing; close closes, with nothing left to settle on', async () => {
    const log: string[] = [];
    const own = new ConsumerChannel();
    const channel = fakeChannel(log);
    const acks = own.take(channel);
    await own.consume(channel, 'q', 1, none);
    own.release();
    assert.equal(own.channel, undefined);
    assert.equal(own.acks, undefined);
    assert.equal(own.consuming, false);
    assert.equal(acks.closed, true);
    assert.equal(log.includes('close'), false);
    own.take(channel);
    await own.consume(channel, 'q', 1, none);
    own.forgetConsumer();
    assert.equal(own.consuming, false);
    await own.close();
    assert.equal(own.channel, undefined);
    assert.equal(log.filter((l) => l === 'close').length, 1);
    assert.equal(log.filter((l) => l.startsWith('cancel')).length, 0);
  });
});
