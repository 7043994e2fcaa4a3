import assert from 'node:assert/strict';
import { cycle3, republished } from '../fixtures/x-death';
import type { ConsumeMessage } from 'amqplib';
import { toAmqpInfo } from '../../../src/lib/message/message-info';
import { ATTEMPT_HEADER, attemptsExhausted, failedAttempts, FIRST_SEEN_HEADER, firstSeenMs, malformedDeathHeader, originalRoute, readDeathHeader, readDeaths, retryInfo } from '../../../src/lib/message/attempts';

const ts = (seconds: number) => ({ '!': 'timestamp', value: seconds });

/** Delivery 3 of the seed's pure broker cycle, as amqplib decodes it (recorded on 3.10.8 and 4.0.5). */
const thirdDelivery = {
  'x-death': [
    { count: 2, reason: 'expired', queue: 'retry-queue', time: ts(1795322260), exchange: 'retry-exchange', 'routing-keys': ['srvc.transact.cash'] },
    { count: 2, reason: 'rejected', queue: 'main-queue', time: ts(1795322257), exchange: 'main-exchange', 'routing-keys': ['srvc.transact.cash'] },
  ],
  'x-first-death-exchange': 'main-exchange',
  'x-first-death-queue': 'main-queue',
  'x-first-death-reason': 'rejected',
};

describe('attempts from x-death', () => {
  it('a forged x-death (count "abc") does not raise the attempt: attempt 1, and msg.retry.malformed says why', () => {
    const forged = { 'x-death': [{ queue: 'main-queue', reason: 'rejected', count: 'abc', exchange: '', 'routing-keys': ['k'] }] };
    const info = retryInfo(forged, 'main-queue', 3);
    assert.equal(info.attempt, 1);
    assert.equal(info.remaining, 2);
    assert.equal(info.malformed, "x-death entry 1 has count 'abc', not a whole number");
    assert.equal(failedAttempts(forged, 'main-queue'), 0);
    // The package's own header still counts: a message it retried keeps its attempts.
    assert.equal(retryInfo({ ...forged, [ATTEMPT_HEADER]: 2 }, 'main-queue', 3).attempt, 3);
    assert.equal(retryInfo({ 'x-death': [{ queue: 'main-queue', reason: 'rejected', count: 2 }] }, 'main-queue', 3).malformed, undefined);
  });

  it('an x-death time out of Date\'s range (forged) gives a record without a time, not an exception', () => {
    const deaths = readDeaths({ 'x-death': [{ queue: 'main', reason: 'rejected', count: 1, exchange: '', 'routing-keys': ['main'], time: { '!': 'timestamp', value: 1e20 } }] });
    assert.equal(deaths.length, 1);
    assert.equal(deaths[0]?.time, undefined);
  });

  it('counts a first delivery as attempt 1', () => {
    assert.deepEqual(retryInfo(undefined, 'main-queue', 3), { attempt: 1, maxAttempts: 3, remaining: 2, firstDeathReason: null, deaths: [] });
  });

  it('an x-death that is null or not an array: attempt 1, and only the one that is not an array is malformed', () => {
    assert.deepEqual(retryInfo({ 'x-death': null }, 'main-queue', 3), { attempt: 1, maxAttempts: 3, remaining: 2, firstDeathReason: null, deaths: [] });
    const notArray = retryInfo({ 'x-death': 'rejected', [ATTEMPT_HEADER]: 1 }, 'main-queue', 3);
    assert.equal(notArray.attempt, 2);
    assert.equal(notArray.malformed, 'x-death is not an array');
  });

  it('uses the (main queue, rejected) entry, not x-death[0]', () => {
    const info = retryInfo(thirdDelivery, 'main-queue', 3);
    assert.equal(info.attempt, 3);
    assert.equal(info.remaining, 0);
    assert.equal(info.firstDeathReason, 'rejected');
    assert.equal(info.deaths.length, 2);
    assert.deepEqual(info.deaths[1], {
      queue: 'main-queue',
      reason: 'rejected',
      count: 2,
      exchange: 'main-exchange',
      routingKeys: ['srvc.transact.cash'],
      time: new Date(1795322257 * 1000).toISOString(),
    });
  });

  it('gives the same answer when the array order changes', () => {
    const reversed = { ...thirdDelivery, 'x-death': [...thirdDelivery['x-death']].reverse() };
    assert.equal(retryInfo(reversed, 'main-queue', 3).attempt, 3);
  });

  it('ignores rejections from other queues (a fanout retry exchange shared by several queues)', () => {
    const headers = { 'x-death': [{ count: 5, reason: 'rejected', queue: 'other-queue', exchange: '', 'routing-keys': ['k'] }] };
    assert.equal(failedAttempts(headers, 'main-queue'), 0);
  });

  it('takes the larger of x-death and the package header (RabbitMQ 4 ignores a republished x-death)', () => {
    // On 4.0 a republished message shows count 1 again; the package's own header remembers 2.
    const republished = { 'x-death': [{ count: 1, reason: 'rejected', queue: 'main-queue', exchange: '', 'routing-keys': ['main-queue'] }], [ATTEMPT_HEADER]: 2 };
    assert.equal(retryInfo(republished, 'main-queue', 5).attempt, 3);
    assert.equal(retryInfo({ ...thirdDelivery, [ATTEMPT_HEADER]: 1 }, 'main-queue', 5).attempt, 3);
  });

  it('skips malformed entries instead of throwing', () => {
    const headers = { 'x-death': [null, 'x', { reason: 'rejected' }, { queue: 'main-queue', reason: 'rejected', count: '4' }], [ATTEMPT_HEADER]: 'junk' };
    assert.equal(readDeaths(headers).length, 1);
    // A header the broker cannot have written (entries that are not tables) counts for nothing.
    assert.equal(failedAttempts(headers, 'main-queue'), 0);
    assert.deepEqual(readDeaths({ 'x-death': 'not an array' }), []);
  });

  it('reads counts wrapped by amqplib', () => {
    const headers = { 'x-death': [{ queue: 'q', reason: 'rejected', count: { '!': 'long', value: 7 } }] };
    assert.equal(failedAttempts(headers, 'q'), 7);
  });

  it('tells the first-seen time from the package header, the timestamp (s or ms) or the first rejection', () => {
    assert.equal(firstSeenMs(undefined, undefined, 'main-queue'), undefined);
    assert.equal(firstSeenMs(undefined, 1_700_000_000, 'main-queue'), 1_700_000_000_000);
    assert.equal(firstSeenMs(undefined, 1_700_000_000_123, 'main-queue'), 1_700_000_000_123);
    assert.equal(firstSeenMs(thirdDelivery, undefined, 'main-queue'), 1795322257 * 1000);
    assert.equal(firstSeenMs({ ...thirdDelivery, [FIRST_SEEN_HEADER]: 1_000 }, 1_700_000_000, 'main-queue'), 1_000);
  });

  it('has no limit (and no remaining count) in ordered mode', () => {
    assert.equal(attemptsExhausted({ attempt: 50, maxAttempts: 0 }), false);
  });

  it('says when attempts are exhausted', () => {
    assert.equal(attemptsExhausted({ attempt: 2, maxAttempts: 3 }), false);
    assert.equal(attemptsExhausted({ attempt: 3, maxAttempts: 3 }), true);
    assert.equal(attemptsExhausted({ attempt: 4, maxAttempts: 3 }), true);
  });

  it('finds the original route in the rejected entry', () => {
    assert.deepEqual(originalRoute(thirdDelivery, 'main-queue', { exchange: '', routingKey: 'main-queue' }), { exchange: 'main-exchange', routingKey: 'srvc.transact.cash' });
    assert.deepEqual(originalRoute(undefined, 'main-queue', { exchange: 'ex', routingKey: 'rk' }), { exchange: 'ex', routingKey: 'rk' });
  });

  it('reuses x-death records read before (one read per delivery) with the same results', () => {
    const deaths = readDeaths(thirdDelivery);
    const delivered = { exchange: '', routingKey: 'main-queue' };
    assert.deepEqual(originalRoute(thirdDelivery, 'main-queue', delivered, deaths), originalRoute(thirdDelivery, 'main-queue', delivered));
    assert.equal(firstSeenMs(thirdDelivery, undefined, 'main-queue', deaths), firstSeenMs(thirdDelivery, undefined, 'main-queue'));
    const info = toAmqpInfo('c:1', 'cfg', 'main-queue', { content: Buffer.alloc(0), fields: { ...delivered, deliveryTag: 1, redelivered: false, consumerTag: 't' }, properties: { headers: thirdDelivery } } as unknown as ConsumeMessage, retryInfo(thirdDelivery, 'main-queue', 5));
    assert.deepEqual({ exchange: info.exchange, routingKey: info.routingKey }, originalRoute(thirdDelivery, 'main-queue', delivered));
  });

  it('finds the original route of a republished retry in the package headers (RabbitMQ 4 drops its x-death)', () => {
    const republished = { 'retry-attempt': 1, 'retry-original-exchange': 'orders', 'retry-original-routing-key': 'orders.cancelled' };
    assert.deepEqual(originalRoute(republished, 'main-queue', { exchange: '', routingKey: 'main-queue' }), { exchange: 'orders', routingKey: 'orders.cancelled' });
    // The broker's own record wins where there is one.
    assert.deepEqual(originalRoute({ ...thirdDelivery, ...republished }, 'main-queue', { exchange: '', routingKey: 'main-queue' }), {
      exchange: 'main-exchange',
      routingKey: 'srvc.transact.cash',
    });
    // Only one of the two headers: not trusted.
    assert.deepEqual(originalRoute({ 'retry-original-routing-key': 'x' }, 'main-queue', { exchange: 'ex', routingKey: 'rk' }), { exchange: 'ex', routingKey: 'rk' });
  });

  describe('recorded from RabbitMQ 3.10.8 and 4.0.5', () => {
    for (const version of ['3.10.8', '4.0.5'] as const) {
      it(`${version}: the pure broker cycle counts attempt 3 on the third delivery`, () => {
        const info = retryInfo(cycle3[version], 'main-queue', 3);
        assert.equal(info.attempt, 3);
        assert.equal(info.firstDeathReason, 'rejected');
      });

      it(`${version}: a republished message keeps its count only through the package's own header`, () => {
        // Failed attempts before the republish: 3 (the header the package writes when it republishes).
        assert.equal(retryInfo({ ...republished[version], [ATTEMPT_HEADER]: 3 }, 'main-queue', 5).attempt, 4);
      });
    }

    it('without the header, RabbitMQ 4 restarts the count after a republish (why the header exists)', () => {
      assert.equal(retryInfo(republished['3.10.8'], 'main-queue', 5).attempt, 4);
      assert.equal(retryInfo(republished['4.0.5'], 'main-queue', 5).attempt, 2);
    });
  });

  describe('malformed x-death (a forged header RabbitMQ 3.10 crashes on)', () => {
    it('accepts what brokers write, and no header at all', () => {
      for (const headers of [undefined, {}, thirdDelivery, cycle3['3.10.8'], cycle3['4.0.5'], { 'x-death': [{ count: { '!': 'long', value: 2 }, queue: 'q', reason: 'rejected' }] }]) {
        assert.equal(malformedDeathHeader(headers), undefined);
      }
    });

    it('names what the broker could not have written', () => {
      const entry = { queue: 'main-queue', reason: 'rejected' };
      assert.equal(malformedDeathHeader({ 'x-death': [{ ...entry, count: 'abc' }] }), "x-death entry 1 has count 'abc', not a whole number");
      assert.equal(malformedDeathHeader({ 'x-death': [thirdDelivery['x-death'][0], { ...entry, count: '2' }] }), "x-death entry 2 has count '2', not a whole number");
      assert.equal(malformedDeathHeader({ 'x-death': [{ ...entry, count: 1.5 }] }), 'x-death entry 1 has count 1.5, not a whole number');
      assert.equal(malformedDeathHeader({ 'x-death': [{ ...entry, count: -1 }] }), 'x-death entry 1 has count -1, not a whole number');
      assert.equal(malformedDeathHeader({ 'x-death': [entry] }), 'x-death entry 1 has count none, not a whole number');
      assert.equal(malformedDeathHeader({ 'x-death': [{ count: 1, reason: 'rejected' }] }), 'x-death entry 1 has no queue or reason');
      assert.equal(malformedDeathHeader({ 'x-death': ['text'] }), 'x-death entry 1 is not a table');
      assert.equal(malformedDeathHeader({ 'x-death': 'abc' }), 'x-death is not an array');
      assert.equal(malformedDeathHeader({ 'x-death': 7 }), 'x-death is not an array');
      assert.equal(malformedDeathHeader({ 'x-death': entry }), 'x-death is not an array');
      assert.equal(malformedDeathHeader({ 'x-death': Buffer.from('abc') }), 'x-death is not an array');
      assert.equal(malformedDeathHeader({ 'x-death': ['a', 1] }), 'x-death entry 1 is not a table');
      assert.equal(malformedDeathHeader({ 'x-death': [{ ...entry, count: 1 }, 1] }), 'x-death entry 2 is not a table');
    });

    it('every shape counts for nothing (attempt 1) and msg.retry.malformed says why', () => {
      for (const value of ['forged', 7, { queue: 'main-queue', reason: 'rejected', count: 5 }, ['a', 1]]) {
        const info = retryInfo({ 'x-death': value }, 'main-queue', 3);
        assert.equal(info.attempt, 1, JSON.stringify(value));
        assert.equal(typeof info.malformed, 'string', JSON.stringify(value));
      }
    });

    it('the one-pass read (what retryInfo uses) finds the problem malformedDeathHeader finds, and still reads the well-formed entries', () => {
      const entry = { queue: 'main-queue', reason: 'rejected' };
      const cases = [
        undefined,
        {},
        { 'x-death': null },
        { 'x-death': 'abc' },
        thirdDelivery,
        cycle3['3.10.8'],
        cycle3['4.0.5'],
        { 'x-death': [{ ...entry, count: 'abc' }] },
        { 'x-death': ['text', { ...entry, count: 1.5 }] },
        { 'x-death': [{ count: 1, reason: 'rejected' }, { ...entry, count: -1 }] },
        { 'x-death': [thirdDelivery['x-death'][0], entry, 7, { ...entry, count: { '!': 'long', value: 2 }, 'routing-keys': ['a', Buffer.from('b'), 3] }] },
      ];
      for (const headers of cases) {
        const h = headers as Record<string, unknown> | undefined;
        assert.equal(readDeathHeader(h).malformed, malformedDeathHeader(h), JSON.stringify(headers));
      }
      assert.deepEqual(readDeathHeader(cases.at(-1) as Record<string, unknown>), {
        deaths: [
          { queue: 'retry-queue', reason: 'expired', count: 2, exchange: 'retry-exchange', routingKeys: ['srvc.transact.cash'], time: new Date(1795322260 * 1000).toISOString() },
          { queue: 'main-queue', reason: 'rejected', count: 1, exchange: '', routingKeys: [] },
          { queue: 'main-queue', reason: 'rejected', count: 2, exchange: '', routingKeys: ['a', 'b'] },
        ],
        malformed: 'x-death entry 2 has count none, not a whole number',
      });
    });
  });
});
