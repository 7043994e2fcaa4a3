/**
 * ConsumerSession without a broker: a fake connection (its narrow SessionConnection) hands out fake
 * channels that record what the session does and let the test deliver messages, close channels and
 * drop the connection.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Channel, ConsumeMessage, Options } from 'amqplib';
import { ConsumerSession, type SessionConnection, type SessionState } from '../../../src/lib/consume';
import type { DeliveredMessage } from '../../../src/lib/message';
import { SettleError } from '../../../src/lib/settle';
import { consumerTopology } from '../fixtures/topology-seed';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000; i += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.fail(`timed out waiting for ${what}`);
}

class FakeChannel extends EventEmitter {
  readonly log: string[];
  consumer: ((message: ConsumeMessage | null) => void) | undefined;
  closed = false;
  /** Passive checks of these queues fail with 404. */
  missing = new Set<string>();
  constructor(log: string[]) {
    super();
    this.log = log;
  }
  prefetch(n: number): Promise<void> {
    this.log.push(`prefetch ${n}`);
    return Promise.resolve();
  }
  consume(queue: string, onMessage: (message: ConsumeMessage | null) => void): Promise<{ consumerTag: string }> {
    this.log.push(`consume ${queue}`);
    this.consumer = onMessage;
    return Promise.resolve({ consumerTag: 'ctag' });
  }
  cancel(): Promise<void> {
    this.log.push('cancel');
    this.consumer = undefined;
    return Promise.resolve();
  }
  ack(message: ConsumeMessage, all = false): void {
    this.log.push(`ack ${message.fields.deliveryTag}${all ? '+' : ''}`);
  }
  nack(message: ConsumeMessage, all = false, requeue = true): void {
    this.log.push(`nack ${message.fields.deliveryTag}${all ? '+' : ''}${requeue ? ' requeue' : ''}`);
  }
  reject(message: ConsumeMessage, requeue = true): void {
    this.log.push(`reject ${message.fields.deliveryTag}${requeue ? ' requeue' : ''}`);
  }
  nackAll(requeue = true): void {
    this.log.push(`nack all${requeue ? ' requeue' : ''}`);
  }
  assertExchange(name: string): Promise<void> {
    this.log.push(`declare exchange ${name}`);
    return Promise.resolve();
  }
  assertQueue(name: string, options: Options.AssertQueue): Promise<void> {
    this.log.push(`declare queue ${name} ${JSON.stringify(options.arguments)}`);
    return Promise.resolve();
  }
  bindQueue(): Promise<void> {
    return Promise.resolve();
  }
  checkExchange(): Promise<void> {
    return Promise.resolve();
  }
  checkQueue(name: string): Promise<{ messageCount: number }> {
    if (this.missing.has(name)) return Promise.reject(Object.assign(new Error(`NOT_FOUND - no queue '${name}'`), { code: 404 }));
    return Promise.resolve({ messageCount: 0 });
  }
  close(): Promise<void> {
    this.closed = true;
    this.emit('close');
    return Promise.resolve();
  }
  /** The channel closes under the session: with the broker's close (amqplib's `error`, then `close`), or with its connection. */
  lose(brokerSaid?: string): void {
    this.closed = true;
    if (brokerSaid !== undefined) this.emit('error', Object.assign(new Error(brokerSaid), { code: 406 }));
    this.emit('close');
  }
}

class FakeConnection extends EventEmitter implements SessionConnection {
  connection: object | undefined = {};
  readonly log: string[] = [];
  readonly channels: FakeChannel[] = [];
  missing = new Set<string>();
  createChannel(): Promise<Channel> {
    if (!this.connection) return Promise.reject(new Error('not connected'));
    const channel = new FakeChannel(this.log);
    channel.missing = this.missing;
    this.channels.push(channel);
    return Promise.resolve(channel as unknown as Channel);
  }
  async withThrowawayChannel<T>(work: (channel: Channel) => Promise<T>): Promise<T> {
    const channel = await this.createChannel();
    try {
      return await work(channel);
    } finally {
      await channel.close();
    }
  }
  /** The consuming channel: the last one that consumes. */
  get consuming(): FakeChannel {
    const channel = [...this.channels].reverse().find((c) => c.consumer !== undefined);
    if (!channel) throw new Error('nothing consumes');
    return channel;
  }
}

const topology = consumerTopology;

let tag = 0;
function message(headers: Record<string, unknown> = {}): ConsumeMessage {
  tag += 1;
  return {
    content: Buffer.from(`{"n":${tag}}`),
    fields: { deliveryTag: tag, redelivered: false, exchange: '', routingKey: 'q', consumerTag: 'ctag' },
    properties: { contentType: 'application/json', headers },
  } as unknown as ConsumeMessage;
}

function start(options: { mode?: 'declare' | 'check'; prefetch?: number; ordered?: boolean; copies?: { publish(): Promise<void> } } = {}) {
  const connection = new FakeConnection();
  const session = new ConsumerSession({
    connection,
    copies: options.copies ?? { publish: () => Promise.resolve() },
    configId: 'cfg',
    topology: { ...topology, mode: options.mode ?? 'declare' },
    prefetch: options.prefetch ?? 10,
    settleTimeoutMs: 0,
    decode: 'auto',
    invalidBody: 'park',
    ...(options.ordered ? { ordered: { pauseMs: 1000 } } : {}),
  });
  const states: SessionState[] = [];
  const delivered: DeliveredMessage[] = [];
  const errors: string[] = [];
  const warnings: string[] = [];
  session.on('state', (s) => states.push(s));
  session.on('error', (e) => errors.push(e));
  session.on('warning', (w) => warnings.push(w));
  session.deliveries.on('warning', (w) => warnings.push(w));
  session.deliveries.on('message', (d) => delivered.push(d));
  session.start();
  return { connection, session, states, delivered, errors, warnings };
}

describe('ConsumerSession', () => {
  it('declares the topology on a channel of its own, then consumes the main queue with its prefetch', async () => {
    const { connection, session } = start({ prefetch: 7 });
    await until(() => session.state.phase === 'consuming', 'consuming');
    const declared = connection.log.filter((l) => l.startsWith('declare queue')).map((l) => l.split(' ')[2]);
    assert.deepEqual(declared, ['q', 'q.retry', 'q.parking']);
    assert.deepEqual(connection.log.slice(-2), ['prefetch 7', 'consume q']);
    assert.equal(connection.channels[0]?.closed, true, 'the declaring channel is closed after');
    await session.stop();
  });

  it('hands each delivery to the flow with its attempt from x-death, under an opaque id, and acks it when settled', async () => {
    const { connection, session, delivered } = start();
    await until(() => session.state.phase === 'consuming', 'consuming');
    connection.consuming.consumer?.(message({ 'x-death': [{ queue: 'q', reason: 'rejected', count: 2, exchange: '', 'routing-keys': ['q'] }] }));
    assert.equal(delivered.length, 1);
    const { amqp, retry } = delivered[0]!;
    assert.equal(retry.attempt, 3);
    assert.equal(amqp.config, 'cfg');
    assert.equal(session.stats.inFlight, 1);
    assert.deepEqual(await session.deliveries.settle(amqp.deliveryId, 'ack'), { done: 'acked', attempt: 3 });
    await nextTurn();
    assert.equal(connection.log.at(-1), `ack ${tag}+`);
    assert.deepEqual({ inFlight: session.stats.inFlight, acked: session.stats.acked, delivered: session.stats.delivered }, { inFlight: 0, acked: 1, delivered: 1 });
    await session.stop();
  });

  it('a channel the broker closes: what the flow holds is stale (the broker redelivers it), and the session says so', async () => {
    const { connection, session, delivered, warnings } = start();
    await until(() => session.state.phase === 'consuming', 'consuming');
    connection.consuming.consumer?.(message());
    connection.consuming.lose();
    assert.equal(session.state.phase, 'channel-lost');
    assert.match(warnings.join('\n'), /consumer channel closed \(with its connection, or by this client\): 1 unsettled message will be redelivered by the broker/);
    await assert.rejects(session.deliveries.settle(delivered[0]!.amqp.deliveryId, 'ack'), (err: SettleError) => err.kind === 'stale');
    await session.stop();
  });

  // Issue 52, item 3: a channel the broker closed returned a forged message whose park copy was in flight, and nothing said why.
  it('a channel the broker closes says why (its code and text), with the copies in flight, even when the flow holds nothing', async () => {
    let confirm: (() => void) | undefined;
    const { connection, session, delivered, warnings } = start({ copies: { publish: () => new Promise<void>((resolve) => (confirm = resolve)) } });
    await until(() => session.state.phase === 'consuming', 'consuming');
    connection.consuming.consumer?.(message({ 'x-death': 'not-an-array' }));
    const parking = session.deliveries.settle(delivered[0]!.amqp.deliveryId, 'retry', 'temporary failure');
    connection.consuming.lose('Channel closed by server: 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - unknown delivery tag 9"');
    assert.deepEqual(warnings, [
      'consumer channel closed by the broker (Channel closed by server: 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - unknown delivery tag 9"): 0 unsettled messages will be redelivered by the broker; 1 copy (retry or park) in flight: their originals come back too',
    ]);
    confirm?.();
    await assert.rejects(parking, (err: SettleError) => err.kind === 'stale');
    await until(() => session.state.phase === 'consuming', 'consuming again');
    connection.consuming.lose('Channel closed by server: 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - unknown delivery tag 1"');
    assert.match(warnings.at(-1) ?? '', /^consumer channel closed by the broker \(.*unknown delivery tag 1"\): 0 unsettled messages will be redelivered by the broker$/);
    await session.stop();
  });

  it('waits for the connection when it drops, and sets up again when it is back', async () => {
    const { connection, session } = start();
    await until(() => session.state.phase === 'consuming', 'consuming');
    connection.connection = undefined;
    connection.consuming.lose();
    connection.emit('disconnected');
    assert.equal(session.state.phase, 'waiting-for-connection');
    connection.connection = {};
    const before = connection.channels.length;
    connection.emit('connected');
    await until(() => session.state.phase === 'consuming' && connection.channels.length > before, 'consuming again');
    await session.stop();
  });

  it('cancelled by the broker, its queue still there and nothing held: the leader moved, said once; the channel closed, consuming again', async () => {
    const { connection, session, errors, warnings } = start();
    await until(() => session.state.phase === 'consuming', 'consuming');
    const channel = connection.consuming;
    channel.consumer?.(null);
    await until(() => session.state.phase === 'channel-lost', 'the cause found');
    assert.deepEqual(session.state.cancelled, { cause: 'leader-moved' });
    assert.deepEqual(errors, []);
    assert.deepEqual(warnings, [
      "the broker cancelled the consumer of queue 'q': the queue is still there and no message was held past its consumer timeout, so its leader moved; its unsettled messages go back to the queue; consuming again",
    ]);
    assert.equal(channel.closed, true);
    await until(() => session.state.phase === 'consuming' && connection.consuming !== channel, 'consuming again on a new channel');
    await session.stop();
  });

  it('cancelled by the broker, its queue gone (a passive check: 404): deleted, declared again in declare mode', async () => {
    const { connection, session, warnings } = start();
    await until(() => session.state.phase === 'consuming', 'consuming');
    const channel = connection.consuming;
    connection.missing.add('q');
    channel.consumer?.(null);
    await until(() => session.state.phase === 'channel-lost', 'the cause found');
    assert.deepEqual(session.state.cancelled, { cause: 'deleted' });
    assert.deepEqual(warnings, ["the broker cancelled the consumer of queue 'q': the queue was deleted (its messages with it); declaring it again"]);
    connection.missing.delete('q');
    await until(() => session.state.phase === 'consuming' && connection.consuming !== channel, 'consuming again on a new channel');
    await session.stop();
  });

  it("cancelled by the broker while a delivery is held past the queue's x-consumer-timeout: the consumer timeout, with its value", async () => {
    const connection = new FakeConnection();
    const session = new ConsumerSession({
      connection,
      copies: { publish: () => Promise.resolve() },
      topology: { ...topology, mainQueueArguments: { ...topology.mainQueueArguments, 'x-consumer-timeout': 1 } },
      prefetch: 1,
      settleTimeoutMs: 0,
      decode: 'auto',
      invalidBody: 'park',
    });
    const warnings: string[] = [];
    session.on('warning', (w) => warnings.push(w));
    session.start();
    await until(() => session.state.phase === 'consuming', 'consuming');
    connection.consuming.consumer?.(message());
    connection.consuming.consumer?.(null);
    await until(() => session.state.phase === 'channel-lost', 'the cause found');
    assert.deepEqual(session.state.cancelled, { cause: 'consumer-timeout', timeoutMs: 1 });
    assert.ok(warnings.includes("the broker cancelled the consumer of queue 'q': a message was held unsettled longer than its consumer timeout of 1ms; its unsettled messages go back to the queue; consuming again"), warnings.join('\n'));
    await session.stop();
  });

  it('check mode: a missing queue is a topology error naming it, reported once', async () => {
    const connection0 = new FakeConnection();
    connection0.missing.add('q.parking');
    const session = new ConsumerSession({
      connection: connection0,
      copies: { publish: () => Promise.resolve() },
      topology: { ...topology, mode: 'check' },
      prefetch: 1,
      settleTimeoutMs: 0,
      decode: 'auto',
      invalidBody: 'park',
    });
    const errors: string[] = [];
    session.on('error', (e) => errors.push(e));
    session.start();
    await until(() => session.state.phase === 'topology-error', 'a topology error');
    assert.match(errors[0] ?? '', /queue 'q\.parking' does not exist on the broker \(check mode never creates it\)/);
    assert.deepEqual(session.state.objects?.filter((o) => o.state !== 'ok').map((o) => `${o.kind} ${o.name} ${o.state}`), ['queue q.parking missing']);
    assert.equal(connection0.log.some((l) => l.startsWith('declare')), false, 'check mode never declares');
    await session.stop();
  });

  it('a refused setup re-checks without announcing it: no `checking-topology` between two failures (issue 52, item 6: its status would flap red / yellow)', async () => {
    const connection = new FakeConnection();
    connection.missing.add('q.parking');
    const session = new ConsumerSession({ connection, copies: { publish: () => Promise.resolve() }, topology: { ...topology, mode: 'check' }, prefetch: 1, settleTimeoutMs: 0, decode: 'auto', invalidBody: 'park' });
    const phases: string[] = [];
    const errors: string[] = [];
    session.on('state', (state) => phases.push(state.phase));
    session.on('error', (e) => errors.push(e));
    session.start();
    await until(() => session.state.phase === 'topology-error', 'the first failure');
    // Two more checks, as the re-check's timer would start them (a setup asked for; `connected` asks at once).
    for (let i = 0; i < 2; i += 1) {
      const before = phases.length;
      connection.emit('connected');
      await until(() => phases.length > before && phases.at(-1) === 'topology-error', 'a re-check failing again');
    }
    assert.deepEqual(phases, ['checking-topology', 'topology-error', 'topology-error', 'topology-error']);
    assert.equal(errors.length, 1, 'the same error once');
    connection.missing.delete('q.parking');
    connection.emit('connected');
    await until(() => session.state.phase === 'consuming', 'healed by a re-check once the queue is there');
    assert.deepEqual(phases.slice(4), ['consuming'], 'from red straight to consuming');
    await session.stop();
  });

  it('pause cancels the consumer and keeps settling; resume consumes again on the same channel', async () => {
    const { connection, session, delivered } = start();
    await until(() => session.state.phase === 'consuming', 'consuming');
    const channel = connection.consuming;
    channel.consumer?.(message());
    await session.pause();
    assert.equal(session.state.phase, 'paused');
    assert.equal(connection.log.at(-1), 'cancel');
    await session.deliveries.settle(delivered[0]!.amqp.deliveryId, 'ack');
    await session.resume();
    assert.equal(session.state.phase, 'consuming');
    assert.equal(connection.consuming, channel);
    await session.stop();
  });

  it('ordered, paused with nothing in flight: the channel closes (the standby gets the queue) and it says paused', async () => {
    const { connection, session } = start({ ordered: true, prefetch: 1 });
    await until(() => session.state.phase === 'consuming', 'consuming');
    const channel = connection.consuming;
    await session.pause();
    assert.equal(channel.closed, true);
    assert.deepEqual(session.state, { phase: 'paused', detail: 'paused' });
    await session.stop();
  });

  it('ordered, standing by (another instance holds the partition): the channel closes only once nothing is in flight; back, it consumes again', async () => {
    const { connection, session, delivered } = start({ ordered: true, prefetch: 1 });
    await until(() => session.state.phase === 'consuming', 'consuming');
    const channel = connection.consuming;
    channel.consumer?.(message());
    await until(() => delivered.length === 1, 'in the flow');
    const standingBy = session.standby(true);
    await nextTurn();
    assert.equal(channel.closed, false, 'not handed over while its message is in flight');
    await session.deliveries.settle(delivered[0]!.amqp.deliveryId, 'ack');
    await standingBy;
    await until(() => channel.closed, 'handed over once settled');
    assert.deepEqual(session.state, { phase: 'paused', detail: 'standby' });
    assert.ok(connection.log.some((line) => line.startsWith('ack ')), 'its ack went out');
    await session.standby(false);
    await until(() => session.state.phase === 'consuming' && connection.consuming !== channel, 'consuming again on a new channel');
    await session.stop();
  });

  it('ordered, stopping: no basic.cancel (the standby would get the next message while this one is in flight); the close hands the queue over once settled', async () => {
    const { connection, session, delivered } = start({ ordered: true, prefetch: 1 });
    await until(() => session.state.phase === 'consuming', 'consuming');
    const channel = connection.consuming;
    channel.consumer?.(message());
    await until(() => delivered.length === 1, 'in the flow');
    const stopping = session.stop({ drainMs: 5000 });
    await nextTurn();
    assert.equal(channel.closed, false, 'open while its message is in flight');
    await session.deliveries.settle(delivered[0]!.amqp.deliveryId, 'ack');
    await stopping;
    assert.equal(channel.closed, true);
    assert.ok(!connection.log.includes('cancel'), connection.log.join(', '));
  });

  it('stop drains: the flow settles what it holds before the channel closes, and nothing stays unsettled', async () => {
    const { connection, session, delivered, warnings } = start();
    await until(() => session.state.phase === 'consuming', 'consuming');
    const channel = connection.consuming;
    channel.consumer?.(message());
    const stopping = session.stop({ drainMs: 5000 });
    await nextTurn();
    assert.equal(channel.closed, false, 'the channel stays open while the flow holds a message');
    await session.deliveries.settle(delivered[0]!.amqp.deliveryId, 'ack');
    await stopping;
    assert.equal(channel.closed, true);
    const log = connection.log;
    assert.ok(log.indexOf('cancel') < log.indexOf(`ack ${tag}+`), 'cancel first, then the ack');
    assert.deepEqual(warnings, []);
    assert.equal(session.state.phase, 'stopped');
  });

  it('stop without a way to settle closes at once: the broker redelivers what was in flight', async () => {
    const { connection, session, warnings } = start();
    await until(() => session.state.phase === 'consuming', 'consuming');
    connection.consuming.consumer?.(message());
    await session.stop({ drainMs: 60_000, settlePath: () => false });
    assert.match(warnings.join('\n'), /stopping with 1 message unsettled \(the nodes that settle them are stopping too\)/);
    assert.equal(connection.channels.at(-1)?.closed, true);
  });

  it('its own park shows in the parking depth at once, before any look', async () => {
    const { connection, session, delivered } = start();
    const parking: number[] = [];
    session.on('parking', () => parking.push(session.stats.parkingDepth ?? -1));
    await until(() => session.state.phase === 'consuming', 'consuming');
    connection.consuming.consumer?.(message());
    await session.deliveries.settle(delivered[0]!.amqp.deliveryId, 'park', 'hopeless');
    assert.equal(session.stats.parkingDepth, 1);
    assert.deepEqual(parking, [1]);
    await session.stop();
  });
});
