/** ConfirmPublisher without a broker: a fake confirm channel answers each publish as a broker would. */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ConfirmChannel, Options } from 'amqplib';
import { ConfirmPublisher, PublishError, type BatchMessage } from '../../../src/lib/publish';

type Callback = (err: unknown) => void;

/** Records publishes; the test answers them (confirm, nack, return) in the broker's order. */
class FakeConfirmChannel extends EventEmitter {
  readonly sent: Array<{ exchange: string; routingKey: string; content: Buffer; options: Options.Publish; callback: Callback }> = [];
  full = false;
  throws: Error | undefined;

  publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish, callback: Callback): boolean {
    if (this.throws) throw this.throws;
    this.sent.push({ exchange, routingKey, content, options, callback });
    return !this.full;
  }

  close(): Promise<void> {
    this.emit('close');
    return Promise.resolve();
  }

  /** The broker's basic.return of publish `i` (it comes before that publish's confirm). */
  returnOf(i: number): void {
    const sent = this.sent[i]!;
    this.emit('return', { content: sent.content, fields: { exchange: sent.exchange, routingKey: sent.routingKey }, properties: {} });
  }
}

function make(): { channel: FakeConfirmChannel; publisher: ConfirmPublisher } {
  const channel = new FakeConfirmChannel();
  return { channel, publisher: new ConfirmPublisher(channel as unknown as ConfirmChannel) };
}

describe('ConfirmPublisher', () => {
  it('resolves on the confirm, and always publishes mandatory (without copying options that have it)', async () => {
    const { channel, publisher } = make();
    const done = publisher.publish('ex', 'rk', Buffer.from('a'), { persistent: true });
    const own = { mandatory: true, persistent: true };
    const second = publisher.publish('ex', 'rk', Buffer.from('b'), own);
    assert.equal(channel.sent[0]!.options.mandatory, true);
    assert.equal(channel.sent[1]!.options, own);
    channel.sent[0]!.callback(null);
    channel.sent[1]!.callback(null);
    await done;
    await second;
  });

  it('a returned publish is an error naming where it could not go, even though the broker confirms it', async () => {
    const { channel, publisher } = make();
    const first = publisher.publish('ex', 'rk', Buffer.from('same'));
    const second = publisher.publish('ex', 'rk', Buffer.from('same'));
    // Returns come in publish order: the oldest unreturned one of the same target and body is the one.
    channel.returnOf(0);
    channel.sent[0]!.callback(null);
    channel.sent[1]!.callback(null);
    await assert.rejects(first, (err: PublishError) => err.failure === 'unroutable' && /no queue is bound for exchange 'ex' with routing key 'rk'/.test(err.message));
    await second;
  });

  it('an empty routing key on the default exchange says how to give one', async () => {
    const { channel, publisher } = make();
    const done = publisher.publish('', '', Buffer.from('x'));
    channel.returnOf(0);
    channel.sent[0]!.callback(null);
    await assert.rejects(done, /routing key is empty: set one on the node or in msg.topic/);
  });

  it('a nack is the broker refusing the message', async () => {
    const { channel, publisher } = make();
    const done = publisher.publish('ex', 'rk', Buffer.from('x'));
    channel.sent[0]!.callback(new Error('message nacked'));
    await assert.rejects(done, (err: PublishError) => err.failure === 'nacked' && /the broker refused the message \(nack\)/.test(err.message));
  });

  it('a channel the broker closed with 404 names the missing exchange; later publishes fail at once', async () => {
    const { channel, publisher } = make();
    const done = publisher.publish('orders', 'rk', Buffer.from('x'));
    channel.emit('error', Object.assign(new Error("Channel closed by server: 404 (NOT-FOUND) with message \"NOT_FOUND - no exchange 'orders' in vhost '/'\""), { code: 404 }));
    channel.emit('close');
    channel.sent[0]!.callback(new Error('channel closed'));
    await assert.rejects(done, (err: PublishError) => err.failure === 'channel-closed' && /exchange 'orders' does not exist \(404 NOT_FOUND/.test(err.message));
    assert.equal(publisher.closed, true);
    await assert.rejects(publisher.publish('orders', 'rk', Buffer.from('y')), /cannot publish/);
    assert.equal(channel.sent.length, 1);
  });

  it('a message over the broker max size names both sizes', async () => {
    const { channel, publisher } = make();
    const done = publisher.publish('ex', 'rk', Buffer.from('x'));
    channel.emit('error', Object.assign(new Error('PRECONDITION_FAILED - message size 20971520 is larger than configured max size 16777216'), { code: 406 }));
    channel.sent[0]!.callback(new Error('closed'));
    await assert.rejects(done, /a message of 20971520 bytes is larger than the broker's max_message_size of 16777216 bytes/);
  });

  it('properties amqplib cannot encode fail that publish only; a channel amqplib calls closed fails it as closed', async () => {
    const { channel, publisher } = make();
    channel.throws = new TypeError('bad header');
    await assert.rejects(publisher.publish('ex', 'rk', Buffer.from('x')), (err: PublishError) => err.failure === 'unencodable');
    assert.equal(publisher.closed, false);
    channel.throws = Object.assign(new Error('Channel closed'), { name: 'IllegalOperationError' });
    await assert.rejects(publisher.publish('ex', 'rk', Buffer.from('x')), (err: PublishError) => err.failure === 'channel-closed');
    assert.equal(publisher.closed, true);
  });

  it('send says when the write buffer is full; whenWritable waits for its drain', async () => {
    const { channel, publisher } = make();
    channel.full = true;
    const { written, confirmed } = publisher.send('ex', 'rk', Buffer.from('x'));
    assert.equal(written, false);
    let writable = false;
    const waiting = publisher.whenWritable().then(() => (writable = true));
    await Promise.resolve();
    assert.equal(writable, false);
    channel.emit('drain');
    await waiting;
    channel.sent[0]!.callback(null);
    await confirmed;
  });

  describe('sendBatch', () => {
    /** Messages to ex/rk with the given bodies, from one reused object (as the relay hands them). */
    const messages = (bodies: string[]) => {
      const into: BatchMessage = { exchange: 'ex', routingKey: 'rk', content: Buffer.alloc(0), options: {} };
      return (i: number): BatchMessage => {
        into.content = Buffer.from(bodies[i]!);
        into.options = { headers: { n: i }, persistent: true };
        return into;
      };
    };
    const record = () => {
      const outcomes: Array<string | undefined> = [];
      let calls = 0;
      return { outcomes, calls: () => calls, settle: (i: number, err: PublishError | undefined) => ((calls += 1), (outcomes[i] = err === undefined ? 'ok' : err.failure)) };
    };

    it('publishes every message mandatory in one run; each outcome once, on its own confirm (in any order)', () => {
      const { channel, publisher } = make();
      const r = record();
      assert.equal(publisher.sendBatch(3, messages(['a', 'b', 'c']), r.settle), true);
      assert.deepEqual(channel.sent.map((s) => [s.content.toString(), s.options.mandatory, s.options.persistent]), [['a', true, true], ['b', true, true], ['c', true, true]]);
      channel.sent[2]!.callback(null);
      channel.sent[0]!.callback(null);
      channel.sent[1]!.callback(new Error('message nacked'));
      channel.sent[1]!.callback(null); // a second answer for the same message is ignored
      assert.deepEqual(r.outcomes, ['ok', 'nacked', 'ok']);
      assert.equal(r.calls(), 3);
    });

    it('a returned message of the batch fails that message only (the oldest unreturned of the same target and body)', () => {
      const { channel, publisher } = make();
      const r = record();
      publisher.sendBatch(3, messages(['same', 'same', 'other']), r.settle);
      channel.returnOf(1); // the fake's return carries the body: the first 'same' is the one the broker returned
      for (const sent of channel.sent) sent.callback(null);
      assert.deepEqual(r.outcomes, ['unroutable', 'ok', 'ok']);
    });

    it('returns match across single publishes and batches in publish order; a settled message is not matched again', async () => {
      const { channel, publisher } = make();
      const single = publisher.publish('ex', 'rk', Buffer.from('a'));
      const r = record();
      publisher.sendBatch(1, messages(['a']), r.settle);
      channel.sent[0]!.callback(null); // the single one confirmed: the next return of 'a' is the batch's
      await single;
      channel.returnOf(1);
      channel.sent[1]!.callback(null);
      assert.deepEqual(r.outcomes, ['unroutable']);
    });

    it('a closed channel fails every message; one amqplib cannot encode fails alone', () => {
      const { channel, publisher } = make();
      const r = record();
      channel.throws = new TypeError('bad header');
      publisher.sendBatch(2, messages(['a', 'b']), r.settle);
      assert.deepEqual(r.outcomes, ['unencodable', 'unencodable']);
      channel.throws = undefined;
      const closed = record();
      publisher.sendBatch(2, messages(['a', 'b']), closed.settle);
      channel.emit('error', Object.assign(new Error('NOT_FOUND'), { code: 404 }));
      for (const sent of channel.sent) sent.callback(new Error('channel closed'));
      assert.deepEqual(closed.outcomes, ['channel-closed', 'channel-closed']);
      const after = record();
      publisher.sendBatch(1, messages(['c']), after.settle);
      assert.deepEqual(after.outcomes, ['channel-closed']);
    });

    it('says when the write buffer is full after the batch', () => {
      const { channel, publisher } = make();
      channel.full = true;
      assert.equal(publisher.sendBatch(2, messages(['a', 'b']), () => undefined), false);
      assert.equal(channel.sent.length, 2);
    });

    it("corks the connection's socket for the batch and uncorks it after amqplib's muxer has had its turn (a setImmediate scheduled from a nextTick)", async () => {
      const { channel } = make();
      const events: string[] = [];
      const socket = { corked: 0, cork: () => ((socket.corked += 1), events.push('cork')), uncork: () => ((socket.corked -= 1), events.push('uncork')) };
      (channel as unknown as { connection: unknown }).connection = { stream: socket };
      const corked = new ConfirmPublisher(channel as unknown as ConfirmChannel);
      // As amqplib's channel buffer does on its first write: 'readable' in a nextTick, the muxer's read in a setImmediate from it.
      const publish = channel.publish.bind(channel);
      let scheduled = false;
      channel.publish = (...args: Parameters<FakeConfirmChannel['publish']>) => {
        if (!scheduled) {
          scheduled = true;
          process.nextTick(() => setImmediate(() => events.push(`muxer writes (corked ${socket.corked})`)));
        }
        return publish(...args);
      };
      corked.sendBatch(2, messages(['a', 'b']), () => undefined);
      assert.deepEqual(events, ['cork']);
      assert.equal(channel.sent.length, 2);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(events, ['cork', 'muxer writes (corked 1)', 'uncork']);
      assert.equal(socket.corked, 0);
    });
  });
});
