/**
 * A consumer session's channel lost (channel-loss.ts): what the flow holds let go of (said with what was in flight,
 * or always when the broker closed the channel alone), the session's state after it, a set-up later; a broker's
 * cancel closes the channel and says why once its cause is found; a channel no longer the session's is ignored.
 */
import assert from 'node:assert/strict';
import type { Channel } from 'amqplib';
import { ChannelLoss, type LossParts } from '../../../src/lib/consume/channel-loss';
import { ConsumerChannel } from '../../../src/lib/consume/consumer-channel';
import type { Deliveries } from '../../../src/lib/consume/deliveries';
import type { Drain } from '../../../src/lib/consume/drain';
import type { Intake } from '../../../src/lib/consume/intake';
import type { ConsumerSessionOptions, SessionState } from '../../../src/lib/consume/types';

/** A channel that records being closed (and how its queue's passive check answers: `missing` → 404). */
function fakeChannel(log: string[], queue: 'present' | 'missing' = 'present'): Channel {
  const channel = {
    close: () => Promise.resolve(void log.push('close')),
    checkQueue: () => (queue === 'missing' ? Promise.reject(Object.assign(new Error('NOT_FOUND'), { code: 404 })) : Promise.resolve({ queue: 'q', messageCount: 0, consumerCount: 0 })),
    on: () => channel,
    off: () => channel,
    once: () => channel,
  };
  return channel as unknown as Channel;
}

interface Recorded {
  log: string[];
  warned: string[];
  states: SessionState[];
  own: ConsumerChannel;
  parts: LossParts;
  stopped: boolean;
}

/** The parts a loss needs, recording what is done to them: `gone` unsettled ended, `copying` copies in flight. */
function session(opts: { gone?: number; copying?: number; connected?: boolean; heldSince?: number; queue?: 'present' | 'missing' } = {}): Recorded & { channel: Channel } {
  const log: string[] = [];
  const own = new ConsumerChannel();
  const channel = fakeChannel(log, opts.queue);
  own.take(channel);
  const rec = { log, warned: [] as string[], states: [] as SessionState[], own, stopped: false } as Recorded;
  const deliveries = {
    endAll: (why: string) => (log.push(`endAll ${why}`), opts.gone ?? 0),
    copying: opts.copying ?? 0,
    heldSince: opts.heldSince,
  } as unknown as Deliveries;
  const options = {
    connection: { connection: opts.connected === false ? undefined : {}, withThrowawayChannel: <T>(work: (c: Channel) => Promise<T>) => work(channel) },
    topology: { mainQueue: 'orders', mainQueueArguments: { 'x-queue-type': 'classic' }, mode: 'declare' },
  } as unknown as ConsumerSessionOptions;
  rec.parts = {
    own,
    intake: { drop: () => log.push('drop') } as unknown as Intake,
    deliveries,
    drain: { changed: () => log.push('drain') } as unknown as Drain,
    options,
    stopped: () => rec.stopped,
    warn: (text) => rec.warned.push(text),
    lost: (state) => rec.states.push(state),
    setUpLater: () => log.push('setUpLater'),
  };
  return { ...rec, parts: rec.parts, channel, get stopped() { return rec.stopped; }, set stopped(v: boolean) { rec.stopped = v; } };
}

describe('ChannelLoss', () => {
  it('a lost channel with unsettled deliveries: drops the intake, lets go of the channel, says how many come back, sets up later', () => {
    const s = session({ gone: 2, copying: 1 });
    new ChannelLoss(s.parts).lostChannel('connection lost');
    assert.deepEqual(s.log, ['drop', 'endAll connection lost before it was settled; the broker redelivers it', 'drain', 'setUpLater']);
    assert.equal(s.own.channel, undefined);
    assert.equal(s.warned.length, 1);
    assert.match(s.warned[0] ?? '', /^connection lost: 2 unsettled.*1 copy \(retry or park\) in flight/);
    assert.deepEqual(s.states, [{ phase: 'channel-lost', detail: 'connection lost' }]);
  });

  it('nothing in flight: says nothing, unless asked to always (the broker closed the channel alone)', () => {
    const quiet = session();
    new ChannelLoss(quiet.parts).lostChannel('closed');
    assert.deepEqual(quiet.warned, []);
    const said = session();
    new ChannelLoss(said.parts).lostChannel('closed', undefined, true);
    assert.equal(said.warned.length, 1);
  });

  it('no connection any more: the session waits for one', () => {
    const s = session({ connected: false });
    new ChannelLoss(s.parts).lostChannel('connection closed');
    assert.deepEqual(s.states, [{ phase: 'waiting-for-connection', detail: 'connection closed' }]);
  });

  it('stopped: lets go, but neither a new state nor a set-up later', () => {
    const s = session({ gone: 1 });
    s.stopped = true;
    new ChannelLoss(s.parts).lostChannel('stopping');
    assert.deepEqual(s.states, []);
    assert.ok(!s.log.includes('setUpLater'));
    assert.ok(s.log.includes('drop'));
  });

  it('a cancel already let go of (the cause given): no second let-go, the state carries the cause', () => {
    const s = session({ gone: 3 });
    new ChannelLoss(s.parts).lostChannel('deleted', { cause: 'deleted' });
    assert.ok(!s.log.includes('drop'));
    assert.deepEqual(s.warned, []);
    assert.deepEqual(s.states, [{ phase: 'channel-lost', detail: 'deleted', cancelled: { cause: 'deleted' } }]);
  });

  it("channelGone: only the session's own channel counts; byBroker says it even with nothing in flight", () => {
    const s = session();
    const loss = new ChannelLoss(s.parts);
    loss.channelGone(fakeChannel([]), 'other closed', true);
    assert.deepEqual(s.log, []);
    loss.channelGone(s.channel, 'closed by broker', true);
    assert.equal(s.warned.length, 1);
    assert.equal(s.states.length, 1);
  });

  it('cancelledByBroker: lets go, closes the channel, then says why (queue deleted) and sets up later', async () => {
    const s = session({ gone: 1, queue: 'missing' });
    new ChannelLoss(s.parts).cancelledByBroker(s.channel);
    assert.ok(s.log.includes('close'));
    assert.match(s.warned[0] ?? '', /the broker cancelled the consumer of queue 'orders'/);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(s.warned.length, 2);
    assert.deepEqual(s.states.map((state) => [state.phase, state.cancelled]), [['channel-lost', { cause: 'deleted' }]]);
    assert.ok(s.log.includes('setUpLater'));
  });

  it('cancelledByBroker of a channel no longer the session’s: ignored; set up again meanwhile: the late cause is not said', async () => {
    const s = session({ gone: 1, queue: 'missing' });
    const loss = new ChannelLoss(s.parts);
    loss.cancelledByBroker(fakeChannel([]));
    assert.deepEqual(s.log, []);
    loss.cancelledByBroker(s.channel);
    s.own.take(fakeChannel([])); // a reconnect set up a new channel before the cause was found
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(s.warned.length, 1);
    assert.deepEqual(s.states, []);
  });
});
