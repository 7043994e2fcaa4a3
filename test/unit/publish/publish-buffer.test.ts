import assert from 'node:assert/strict';
import type { BatchMessage, BatchSettle } from '../../../src/lib/publish';
import { PublishBuffer, type PublishRequest, type SendTarget } from '../../../src/lib/publish/publish-buffer';

/** A channel that records what it was handed and confirms when told to. */
class FakeChannel implements SendTarget {
  readonly sent: string[] = [];
  full = false;
  private readonly confirms: Array<() => void> = [];
  private readonly drains: Array<() => void> = [];

  /** The headers each single publish was handed. */
  readonly headers: unknown[] = [];

  send(_exchange: string, routingKey: string, content: Buffer, options: { headers?: unknown } = {}): { written: boolean; confirmed: Promise<void> } {
    this.sent.push(`${routingKey}:${content.toString()}`);
    this.headers.push(options.headers);
    const confirmed = new Promise<void>((resolve) => this.confirms.push(resolve));
    return { written: !this.full, confirmed };
  }

  /** Batches handed over whole (each message also recorded in `sent`). */
  batches = 0;

  sendBatch(n: number, message: (i: number) => BatchMessage, settle: BatchSettle): boolean {
    this.batches += 1;
    for (let i = 0; i < n; i++) {
      const { routingKey, content } = message(i);
      this.sent.push(`${routingKey}:${content.toString()}`);
      this.confirms.push(() => settle(i, undefined));
    }
    return !this.full;
  }

  whenWritable(): Promise<void> {
    return new Promise((resolve) => this.drains.push(resolve));
  }

  confirmAll(): void {
    for (const confirm of this.confirms.splice(0)) confirm();
  }

  drain(): void {
    this.full = false;
    for (const drained of this.drains.splice(0)) drained();
  }
}

function setup(limits = { maxMessages: 3, maxBytes: 1000 }) {
  const channel = new FakeChannel();
  let opened = false;
  const buffer = new PublishBuffer(
    {
      ready: () => (opened ? channel : undefined),
      open: () => {
        opened = true;
        return Promise.resolve(channel);
      },
    },
    limits,
  );
  const publish = (body: string, more: Partial<PublishRequest> = {}) =>
    buffer.publish(Object.assign({ purpose: 'p', exchange: '', routingKey: 'q', content: Buffer.from(body), options: {}, survivesReconnect: true }, more));
  return { channel, buffer, publish };
}

/** Lets the buffer's pump (promise callbacks) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A connected buffer whose channel is open: one publish (`body`) sent and confirmed. */
async function opened(body = 'x') {
  const subject = setup();
  subject.buffer.setConnected(true);
  const first = subject.publish(body);
  await settle();
  subject.channel.confirmAll();
  await first;
  return subject;
}

describe('publish buffer', () => {
  it('publishes at once when nothing holds it back, and resolves on the confirm', async () => {
    const { channel, buffer, publish } = setup();
    buffer.setConnected(true);
    const first = publish('a');
    await settle();
    assert.deepEqual(channel.sent, ['q:a']);
    assert.equal(buffer.state.messages, 0);
    channel.confirmAll();
    await first;
  });

  it('holds publishes while the broker blocks, fails the one past the bound, then sends each once in order', async () => {
    const { channel, buffer, publish } = await opened('warm-up');
    buffer.setBlocked('low on memory');
    const held = ['1', '2', '3'].map((body) => publish(body));
    await assert.rejects(publish('4'), (err: Error & { failure?: string }) => {
      assert.equal(err.failure, 'buffer-full');
      assert.match(err.message, /^publish buffer full \(3\/3 messages, .*\) while the broker blocks publishing \(low on memory\): this message was not published$/);
      return true;
    });
    await settle();
    assert.deepEqual(channel.sent, ['q:warm-up']);
    assert.deepEqual(buffer.state, { blockedBy: 'low on memory', messages: 3, bytes: 3, limits: { maxMessages: 3, maxBytes: 1000 } });
    buffer.setBlocked(undefined);
    await settle();
    assert.deepEqual(channel.sent, ['q:warm-up', 'q:1', 'q:2', 'q:3']);
    channel.confirmAll();
    await Promise.all(held);
    assert.equal(buffer.state.messages, 0);
  });

  // Issue 52, item 3: a forged x-death's park copy refused here went back to its queue at attempt 1.
  it("a copy of a message the broker holds (a retry or park copy) waits past the bound instead of failing, and goes out in turn", async () => {
    const { channel, buffer, publish } = await opened('warm-up');
    buffer.setBlocked('low on memory');
    const held = ['1', '2', '3'].map((body) => publish(body));
    const copy = publish('park copy', { survivesReconnect: false, heldByBroker: true });
    await assert.rejects(publish('4'), /publish buffer full \(4\/3 messages/);
    assert.equal(buffer.state.messages, 4);
    buffer.setBlocked(undefined);
    await settle();
    assert.deepEqual(channel.sent, ['q:warm-up', 'q:1', 'q:2', 'q:3', 'q:park copy']);
    channel.confirmAll();
    await Promise.all([...held, copy]);
  });

  it('bounds the bytes waiting, too', async () => {
    const { buffer, publish } = setup({ maxMessages: 100, maxBytes: 10 });
    buffer.setConnected(true);
    buffer.setBlocked('low on memory');
    void publish('123456');
    await assert.rejects(publish('12345'), /publish buffer full \(1\/100 messages/);
  });

  it('lets a message larger than the bound wait alone, and names the setting when it cannot', async () => {
    const { channel, buffer, publish } = setup({ maxMessages: 100, maxBytes: 10 });
    buffer.setConnected(true);
    buffer.setBlocked('low on memory');
    const big = publish('x'.repeat(50));
    await settle();
    assert.equal(buffer.state.messages, 1, 'it waits, alone');
    await assert.rejects(publish('y'.repeat(30)), /this message alone is 0\.0 MiB: raise the broker node's publish buffer \(MiB\)/);
    buffer.setBlocked(undefined);
    await settle();
    assert.deepEqual(channel.sent, [`q:${'x'.repeat(50)}`]);
    channel.confirmAll();
    await big;
  });

  it('waits for a full channel to drain before it hands over more', async () => {
    const { channel, buffer, publish } = setup();
    buffer.setConnected(true);
    const a = publish('a');
    await settle();
    channel.full = true;
    const b = publish('b');
    const c = publish('c');
    await settle();
    assert.deepEqual(channel.sent, ['q:a', 'q:b']);
    assert.equal(buffer.state.messages, 1);
    channel.drain();
    await settle();
    assert.deepEqual(channel.sent, ['q:a', 'q:b', 'q:c']);
    channel.confirmAll();
    await Promise.all([a, b, c]);
  });

  it('keeps a producer publish through a reconnect, fails a delivery copy waiting when it was lost, and sends nothing twice', async () => {
    const { channel, buffer, publish } = setup();
    buffer.setConnected(true);
    buffer.setBlocked('low on memory');
    const producer = publish('producer');
    const copy = publish('copy', { survivesReconnect: false });
    buffer.setConnected(false);
    await assert.rejects(copy, /not published: the connection to the broker was lost before it was sent/);
    const whileDown = publish('while down', { survivesReconnect: false });
    assert.equal(buffer.state.messages, 2);
    assert.equal(buffer.state.blockedBy, undefined);
    buffer.setConnected(true);
    await settle();
    assert.deepEqual(channel.sent, ['q:producer', 'q:while down']);
    channel.confirmAll();
    await Promise.all([producer, whileDown]);
  });

  it('fails what one purpose has waiting when its node stops', async () => {
    const { buffer, publish } = setup();
    const mine = publish('mine', { purpose: 'node-1' });
    const theirs = publish('theirs', { purpose: 'node-2' });
    buffer.rejectPurpose('node-1', 'the node stopped before the broker took it');
    await assert.rejects(mine, /the node stopped/);
    assert.equal(buffer.state.messages, 1);
    buffer.rejectAll('closed');
    await assert.rejects(theirs, /closed/);
  });

  it('fails the head publish when its channel cannot be opened on a live connection, and goes on', async () => {
    const channel = new FakeChannel();
    let attempts = 0;
    const buffer = new PublishBuffer({
      ready: () => undefined,
      open: () => (++attempts === 1 ? Promise.reject(new Error('access refused')) : Promise.resolve(channel)),
    });
    buffer.setConnected(true);
    const request = { purpose: 'p', exchange: '', routingKey: 'q', options: {}, survivesReconnect: true };
    const first = buffer.publish(Object.assign({ content: Buffer.from('1') }, request));
    const second = buffer.publish(Object.assign({ content: Buffer.from('2') }, request));
    await assert.rejects(first, /access refused/);
    await settle();
    assert.deepEqual(channel.sent, ['q:2']);
    channel.confirmAll();
    await second;
  });

  describe('batches', () => {
    /** Messages a, b, c from one reused object, as the relay hands them. */
    const batchOf = (bodies: string[], headers: Record<string, unknown> = { h: 1 }) => {
      const into: BatchMessage = { exchange: '', routingKey: 'q', content: Buffer.alloc(0), options: {} };
      return (i: number): BatchMessage => {
        into.content = Buffer.from(bodies[i]!);
        into.options = { headers, messageId: bodies[i] };
        return into;
      };
    };

    it('hands a batch over whole to an open channel, outcomes per message', async () => {
      const { channel, buffer } = await opened();
      const outcomes: Array<string | undefined> = [];
      buffer.publishBatch('p', 3, batchOf(['a', 'b', 'c']), (i, err) => (outcomes[i] = err === undefined ? 'ok' : err.message), true);
      assert.equal(channel.batches, 1);
      assert.deepEqual(channel.sent, ['q:x', 'q:a', 'q:b', 'q:c']);
      channel.confirmAll();
      assert.deepEqual(outcomes, ['ok', 'ok', 'ok']);
    });

    it('a full write buffer after a batch holds what comes next until the drain', async () => {
      const { channel, buffer, publish } = await opened();
      channel.full = true;
      buffer.publishBatch('p', 2, batchOf(['a', 'b']), () => undefined, true);
      const later = publish('c');
      await settle();
      assert.deepEqual(channel.sent, ['q:x', 'q:a', 'q:b']);
      channel.drain();
      await settle();
      assert.deepEqual(channel.sent, ['q:x', 'q:a', 'q:b', 'q:c']);
      channel.confirmAll();
      await later;
    });

    it('without an open channel each message waits as a publish, with copies of the reused options and headers', async () => {
      const { channel, buffer } = setup();
      const headers = { h: 1 };
      const outcomes: Array<string | undefined> = [];
      buffer.publishBatch('p', 2, batchOf(['a', 'b'], headers), (i, err) => (outcomes[i] = err === undefined ? 'ok' : err.message), true);
      assert.equal(buffer.state.messages, 2);
      headers.h = 2; // the caller reuses its objects: what waits keeps what it was given
      buffer.setConnected(true);
      await settle();
      assert.equal(channel.batches, 0);
      assert.deepEqual(channel.sent, ['q:a', 'q:b']);
      assert.deepEqual(channel.headers, [{ h: 1 }, { h: 1 }]);
      channel.confirmAll();
      await settle();
      assert.deepEqual(outcomes, ['ok', 'ok']);
    });

    it('past the bound a message of a batch fails at once, the others wait', async () => {
      const { buffer } = setup({ maxMessages: 1, maxBytes: 1000 });
      const outcomes: Array<string | undefined> = [];
      buffer.publishBatch('p', 2, batchOf(['a', 'b']), (i, err) => (outcomes[i] = err === undefined ? 'ok' : err.failure), true);
      await settle();
      assert.equal(outcomes[0], undefined);
      assert.equal(outcomes[1], 'buffer-full');
      assert.equal(buffer.state.messages, 1);
    });
  });
});
