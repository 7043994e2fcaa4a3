/** Reading back at the settle what the retry consumer put on a msg, when core nodes changed msg.retry on the way. */
import assert from 'node:assert/strict';
import { askedDelays, consumerRetry, msgAttempt, replacedRetry } from '../../../../src/nodes/retry-settle/msg-retry';
import type { NodeMessage } from '../../../../src/nodes/shared/node-red';

/** A msg as the consumer sends it: one retry object on msg.retry and msg.amqp.retry. */
function delivered(attempt = 2): NodeMessage {
  const retry = { attempt, maxAttempts: 5, remaining: 5 - attempt, firstDeathReason: 'rejected', deaths: [] };
  return { payload: {}, amqp: { deliveryId: 'c:1', config: 'cfg', retry }, retry };
}

describe('msg-retry: what the consumer put on the msg, read back at the settle', () => {
  it('reads the attempt from msg.amqp.retry when the http request node set msg.retry = 0', () => {
    const msg = delivered(2);
    msg.retry = 0;
    assert.equal(msgAttempt(msg), 2);
    assert.equal(consumerRetry(msg)?.maxAttempts, 5);
  });

  it('falls back to msg.retry on a msg without msg.amqp.retry (built by hand, or by an older consumer)', () => {
    assert.equal(msgAttempt({ payload: 1, amqp: { deliveryId: 'c:1' }, retry: { attempt: 3 } }), 3);
    assert.equal(msgAttempt({ payload: 1, amqp: { deliveryId: 'c:1' }, retry: 0 }), undefined);
    assert.equal(consumerRetry({ payload: 1, amqp: { retry: 0 } }), undefined);
    assert.equal(consumerRetry({ payload: 1 }), undefined);
  });

  it('gives the delays a flow set, on msg.retry and on msg.amqp.retry', () => {
    const msg = delivered();
    (msg.amqp as { retry: Record<string, unknown> }).retry = { attempt: 2, delay: 1500 };
    msg.retry = 0;
    assert.deepEqual(askedDelays(msg), [undefined, 1500]);
    assert.deepEqual(askedDelays({ payload: 1, retry: { delay: '800' } }), ['800', undefined]);
  });

  describe('replacedRetry: what msg.retry is now, when it is no longer what the consumer put there', () => {
    it('nothing while msg.retry is the consumer\'s, the same object or a clone of it (Node-RED clones on fan-out), a delay added or not', () => {
      const msg = delivered();
      assert.equal(replacedRetry(msg), undefined);
      (msg.retry as Record<string, unknown>).delay = 1500;
      assert.equal(replacedRetry(msg), undefined);
      assert.equal(replacedRetry(structuredClone(msg)), undefined);
    });

    it('the number 0 the http request node sets, a msg.retry left out, null, text, an object of the flow\'s', () => {
      const cases: Array<[unknown, string]> = [
        [0, '0'],
        [undefined, 'undefined'],
        [null, 'null'],
        ['soon', '"soon"'],
        [{ delay: 1500 }, '{delay}'],
        [{ attempt: 1, delay: 5 }, '{attempt, delay}'],
        [[1, 2], '[1,2]'],
      ];
      for (const [now, said] of cases) {
        const msg = delivered(2);
        msg.retry = now;
        assert.equal(replacedRetry(msg), said, JSON.stringify(now));
      }
    });

    it('nothing on a msg without msg.amqp.retry to compare with', () => {
      assert.equal(replacedRetry({ payload: 1, amqp: { deliveryId: 'c:1' }, retry: 0 }), undefined);
      assert.equal(replacedRetry({ payload: 1, retry: 0 }), undefined);
    });
  });
});
