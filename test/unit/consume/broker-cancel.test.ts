/**
 * Why the broker cancelled a consumer (issue 52, item 4): the queue deleted (a passive check's 404,
 * looked at again while a 4.3 quorum queue is still on its way out), a delivery held past the queue's
 * consumer timeout (with the timeout), or its leader moved — and the words for each.
 */
import assert from 'node:assert/strict';
import type { Channel } from 'amqplib';
import { BROKER_DEFAULT_CONSUMER_TIMEOUT_MS, RECHECK_AFTER_CANCEL_MS, TIMEOUT_SLACK_MS, brokerCancelText, cancelCause, findCancelCause, type CancelCheck } from '../../../src/lib/consume/broker-cancel';

/** A throwaway-channel runner whose passive checks answer `answers` in turn (the last one again), recording each. */
function checks(answers: Array<'present' | 'missing' | 'closed'>, args?: Record<string, unknown>): CancelCheck & { asked: number; waited: number[] } {
  const state = { asked: 0, waited: [] as number[] };
  const channel = {
    checkQueue: () => {
      const answer = answers[Math.min(state.asked, answers.length - 1)];
      state.asked += 1;
      if (answer === 'missing') return Promise.reject(Object.assign(new Error("NOT_FOUND - no queue 'q'"), { code: 404 }));
      if (answer === 'closed') return Promise.reject(new Error('Channel closed'));
      return Promise.resolve({ queue: 'q', messageCount: 0, consumerCount: 0 });
    },
  } as unknown as Channel;
  const check: CancelCheck & { asked: number; waited: number[] } = {
    connection: { withThrowawayChannel: (work) => work(channel) },
    topology: { mainQueue: 'q', mainQueueArguments: args ?? { 'x-queue-type': 'quorum' }, mode: 'declare' },
    wait: (ms) => {
      state.waited.push(ms);
      return Promise.resolve();
    },
    get asked() {
      return state.asked;
    },
    get waited() {
      return state.waited;
    },
  };
  return check;
}

const NOW = 1_000_000_000;

describe('why the broker cancelled a consumer', () => {
  describe('cancelCause (pure)', () => {
    it('the queue gone: deleted, whatever was held', () => {
      assert.deepEqual(cancelCause({ exists: false, heldMs: 5000, timeoutMs: 1500 }), { cause: 'deleted' });
    });

    it('a delivery held past the timeout (less the slack for its way here): the consumer timeout, with its value', () => {
      assert.deepEqual(cancelCause({ exists: true, heldMs: 1600, timeoutMs: 1500 }), { cause: 'consumer-timeout', timeoutMs: 1500 });
      assert.deepEqual(cancelCause({ exists: true, heldMs: 1500 - TIMEOUT_SLACK_MS, timeoutMs: 1500 }), { cause: 'consumer-timeout', timeoutMs: 1500 });
      assert.deepEqual(cancelCause({ exists: true, heldMs: 1500 - TIMEOUT_SLACK_MS - 1, timeoutMs: 1500 }), { cause: 'leader-moved' });
    });

    it("no timeout on the queue: the broker's default (30 min) is the one", () => {
      assert.deepEqual(cancelCause({ exists: true, heldMs: BROKER_DEFAULT_CONSUMER_TIMEOUT_MS, timeoutMs: undefined }), { cause: 'consumer-timeout' });
      assert.deepEqual(cancelCause({ exists: true, heldMs: 60_000, timeoutMs: undefined }), { cause: 'leader-moved' });
    });

    it('the queue still there and nothing held: its leader moved; the check failed: unknown', () => {
      assert.deepEqual(cancelCause({ exists: true, heldMs: undefined, timeoutMs: 1500 }), { cause: 'leader-moved' });
      assert.deepEqual(cancelCause({ exists: undefined, heldMs: undefined, timeoutMs: undefined }), { cause: 'unknown' });
    });
  });

  describe('brokerCancelText (pure)', () => {
    const head = "the broker cancelled the consumer of queue 'orders'";
    it('deleted: waiting for it to be declared again (check mode), or declaring it (declare mode)', () => {
      assert.equal(brokerCancelText('orders', { cause: 'deleted' }, 'check'), `${head}: the queue was deleted (its messages with it); waiting for it to be declared again (check mode never creates it)`);
      assert.equal(brokerCancelText('orders', { cause: 'deleted' }, 'declare'), `${head}: the queue was deleted (its messages with it); declaring it again`);
    });

    it("the consumer timeout with its value, or the broker's default", () => {
      assert.equal(
        brokerCancelText('orders', { cause: 'consumer-timeout', timeoutMs: 1500 }, 'declare'),
        `${head}: a message was held unsettled longer than its consumer timeout of 1500ms; its unsettled messages go back to the queue; consuming again`,
      );
      assert.equal(
        brokerCancelText('orders', { cause: 'consumer-timeout' }, 'declare'),
        `${head}: a message was held unsettled longer than the broker's consumer_timeout (30m unless configured); its unsettled messages go back to the queue; consuming again`,
      );
    });

    it('leader moved; and the three causes when none could be told', () => {
      assert.equal(
        brokerCancelText('orders', { cause: 'leader-moved' }, 'check'),
        `${head}: the queue is still there and no message was held past its consumer timeout, so its leader moved; its unsettled messages go back to the queue; consuming again`,
      );
      assert.match(brokerCancelText('orders', { cause: 'unknown' }, 'check'), /^the broker cancelled the consumer of queue 'orders' \(the queue was deleted, its leader moved, or on RabbitMQ 4\.3\+/);
    });
  });

  describe('findCancelCause (passive checks)', () => {
    it('a 404 at once: deleted, one check', async () => {
      const check = checks(['missing']);
      assert.deepEqual((await findCancelCause(check, undefined, NOW)).cancelled, { cause: 'deleted' });
      assert.equal(check.asked, 1);
    });

    it('still there at first (a 4.3 quorum queue on its way out), gone at the next look: deleted', async () => {
      const check = checks(['present', 'missing']);
      assert.deepEqual((await findCancelCause(check, undefined, NOW)).cancelled, { cause: 'deleted' });
      assert.deepEqual(check.waited, [RECHECK_AFTER_CANCEL_MS[0]]);
    });

    it('there at every look, nothing held long: leader moved, after every look', async () => {
      const check = checks(['present']);
      assert.deepEqual((await findCancelCause(check, NOW - 10, NOW)).cancelled, { cause: 'leader-moved' });
      assert.equal(check.asked, 1 + RECHECK_AFTER_CANCEL_MS.length);
    });

    it("held past the queue's x-consumer-timeout: the timeout with its value and its words, no second look", async () => {
      const check = checks(['present'], { 'x-queue-type': 'quorum', 'x-consumer-timeout': 1500 });
      const found = await findCancelCause(check, NOW - 2000, NOW);
      assert.deepEqual(found.cancelled, { cause: 'consumer-timeout', timeoutMs: 1500 });
      assert.equal(found.text, brokerCancelText('q', found.cancelled, 'declare'));
      assert.equal(check.asked, 1);
    });

    it("the timeout read from the broker's queue (management API) when the configuration does not set it", async () => {
      const check = { ...checks(['present']), definitionReader: { queueArguments: () => Promise.resolve({ 'x-consumer-timeout': 1500 }), exchangeType: () => Promise.resolve(undefined) } };
      assert.deepEqual((await findCancelCause(check, NOW - 2000, NOW)).cancelled, { cause: 'consumer-timeout', timeoutMs: 1500 });
    });

    it('a check that fails otherwise (the connection going): unknown', async () => {
      assert.deepEqual((await findCancelCause(checks(['closed']), undefined, NOW)).cancelled, { cause: 'unknown' });
    });
  });
});
