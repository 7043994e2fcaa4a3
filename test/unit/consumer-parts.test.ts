/** The parts a ConsumerSession owns, each on its own: why it pauses, its setups' re-checks, its channel. */
import assert from 'node:assert/strict';
import type { Channel } from 'amqplib';
import { ConsumerChannel } from '../../src/lib/consume/consumer-channel';
import { Pauses } from '../../src/lib/consume/pauses';
import { Recheck, recheckDelay } from '../../src/lib/consume/recheck';

describe('Pauses', () => {
  it('consuming without a reason; a reason added twice counts once, removed once', () => {
    const pauses = new Pauses();
    assert.equal(pauses.any, false);
    assert.deepEqual(pauses.state(undefined), { phase: 'consuming' });
    assert.equal(pauses.add('user'), true);
    assert.equal(pauses.add('user'), false);
    assert.equal(pauses.any, true);
    assert.equal(pauses.remove('user'), true);
    assert.equal(pauses.remove('user'), false);
    assert.equal(pauses.any, false);
  });

  it('the reasons add up: paused until none is left', () => {
    const pauses = new Pauses();
    pauses.add('circuit');
    pauses.add('user');
    pauses.remove('circuit');
    assert.equal(pauses.any, true);
    assert.equal(pauses.has('user'), true);
    assert.equal(pauses.has('circuit'), false);
  });

  it('says the store first (with why it is down), then the user, then the kill switch', () => {
    const pauses = new Pauses();
    pauses.add('circuit');
    assert.deepEqual(pauses.state('ignored'), { phase: 'circuit-open' });
    pauses.add('user');
    assert.deepEqual(pauses.state(undefined), { phase: 'paused', detail: 'paused' });
    pauses.add('store');
    assert.deepEqual(pauses.state('ECONNREFUSED'), { phase: 'store-down', detail: 'ECONNREFUSED' });
    assert.deepEqual(pauses.state(undefined), { phase: 'store-down', detail: 'deduplication store down' });
    // What is wrong with the store goes with it: its table (`schema`) is not a store down.
    assert.deepEqual(pauses.state('no table', 'schema'), { phase: 'store-down', detail: 'no table', storeProblem: 'schema' });
  });
});

describe('recheckDelay', () => {
  it('2 s doubled per attempt up to 60 s, without jitter at the middle of the random range', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 20].map((n) => recheckDelay(n, () => 0.5)), [2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });
  it('spread by 10 % either way, never past 60 s', () => {
    assert.equal(recheckDelay(1, () => 0), 1800);
    assert.equal(recheckDelay(1, () => 1), 2200);
    assert.equal(recheckDelay(9, () => 1), 60_000);
  });
});

describe('Recheck', () => {
  it('runs one setup at a time: a second asked for meanwhile is dropped', async () => {
    const recheck = new Recheck(() => undefined);
    let runs = 0;
    let finish: () => void = () => undefined;
    const first = recheck.once(() => {
      runs += 1;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    await recheck.once(() => {
      runs += 1;
      return Promise.resolve();
    });
    assert.equal(runs, 1);
    finish();
    await first;
    await recheck.once(() => {
      runs += 1;
      return Promise.resolve();
    });
    assert.equal(runs, 2);
  });

  it('a failed setup frees the next one', async () => {
    const recheck = new Recheck(() => undefined);
    await assert.rejects(recheck.once(() => Promise.reject(new Error('no'))), /no/);
    let ran = false;
    await recheck.once(() => Promise.resolve(void (ran = true)));
    assert.equal(ran, true);
  });

  it('each re-check waits the next attempt’s delay; a success starts them over', async () => {
    const attempts: number[] = [];
    let due: () => void = () => undefined;
    const recheck = new Recheck(
      () => due(),
      (attempt) => (attempts.push(attempt), 0),
    );
    for (let i = 0; i < 3; i += 1) await new Promise<void>((resolve) => ((due = resolve), recheck.schedule()));
    recheck.succeeded();
    await new Promise<void>((resolve) => ((due = resolve), recheck.schedule()));
    assert.deepEqual(attempts, [1, 2, 3, 1]);
  });

  it('a re-check is dropped by a setup that starts meanwhile, and by stop', async () => {
    // Timers by hand: which are armed, which were cleared.
    const armed = new Set<number>();
    let next = 0;
    const timers = {
      set: (_due: () => void, ms: number): number => {
        assert.equal(ms, 0);
        next += 1;
        armed.add(next);
        return next;
      },
      clear: (timer: unknown): void => {
        armed.delete(timer as number);
      },
    };
    const recheck = new Recheck(
      () => assert.fail('no re-check is due'),
      () => 0,
      timers,
    );
    recheck.schedule();
    assert.equal(armed.size, 1);
    await recheck.once(() => Promise.resolve());
    assert.equal(armed.size, 0, 'the setup dropped the re-check');
    recheck.schedule();
    assert.equal(armed.size, 1);
    recheck.stop();
    assert.equal(armed.size, 0, 'stop dropped the re-check');
  });
});

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
