/** The parts a ConsumerSession owns, each on its own: why it pauses, its setups' re-checks, its channel. */
import assert from 'node:assert/strict';
import type { Channel, Message } from 'amqplib';
import { ConsumerChannel } from '../../../src/lib/consume/consumer-channel';

/** A channel that records what is asked of it; `version`: its broker's, as its connection's server properties say it. */
function fakeChannel(log: string[], version?: string): Channel {
  const channel = {
    ...(version ? { connection: { serverProperties: { version } } } : {}),
    prefetch: (n: number) => Promise.resolve(void log.push(`prefetch ${n}`)),
    consume: (queue: string) => Promise.resolve((log.push(`consume ${queue}`), { consumerTag: 'ctag' })),
    cancel: (tag: string) => (log.push(`cancel ${tag}`), tag === 'fail' ? Promise.reject(new Error('closed')) : Promise.resolve({ consumerTag: tag })),
    ack: () => log.push('ack'),
    ackAll: () => log.push('ackAll'),
    nack: (m?: Message, multiple?: boolean) => log.push(m ? `nack ${m.fields.deliveryTag}${multiple ? ' multiple' : ''}` : 'nack'),
    reject: (m: Message) => log.push(`reject ${m.fields.deliveryTag}`),
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

  // Issue 52, item 7: one frame per dead-letter had cost the retry path a tenth of its throughput.
  it('a new channel dead-letters in the frame its main queue and broker call for: one multiple nack for a classic queue, a reject each for a quorum queue on 4.3+', () => {
    const retried = (args: Record<string, unknown>, version?: string): string[] => {
      const log: string[] = [];
      const acks = new ConsumerChannel().take(fakeChannel(log, version), args);
      const messages = [1, 2, 3, 4].map((tag) => ({ fields: { deliveryTag: tag }, properties: {}, content: Buffer.alloc(0) }) as unknown as Message);
      for (const m of messages) acks.arrived(m);
      for (const m of messages.slice(0, 3)) acks.reject(m, false); // three retries of one turn, the fourth still in the flow
      acks.flush();
      return log;
    };
    for (const version of ['3.10.8', '4.0.5', '4.3.6', undefined]) assert.deepEqual(retried({}, version), ['nack 3 multiple'], `classic, ${version}`);
    const quorum = { 'x-queue-type': 'quorum' };
    assert.deepEqual(retried(quorum, '4.3.6'), ['reject 1', 'reject 2', 'reject 3']);
    assert.deepEqual(retried(quorum, '4.0.5'), ['nack 3 multiple']);
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
