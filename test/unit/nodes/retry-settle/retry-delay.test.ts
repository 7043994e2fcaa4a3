/** The wait a retry asks for, where the flow may set it; warnings said rarely. */
import assert from 'node:assert/strict';
import { flowDelay, Rarely, requestedDelay } from '../../../../src/nodes/retry-settle/retry-delay';
import type { NodeMessage } from '../../../../src/nodes/shared/node-red';

function delivered(): { msg: NodeMessage; retry: Record<string, unknown> } {
  const retry: Record<string, unknown> = { attempt: 1, maxAttempts: 3, remaining: 2, firstDeathReason: null, deaths: [] };
  return { msg: { payload: {}, amqp: { deliveryId: 'c:1', config: 'cfg', retry }, retry }, retry };
}

describe('retry-delay: the wait a retry asks for', () => {
  it('msg.retry.delay, as before: a number or a numeric string of ms, rounded; anything else is none', () => {
    const cases: Array<[unknown, number]> = [[1500, 1500], ['800', 800], [12.6, 13], [0, 0], [-5, 0], ['', 0], ['soon', 0], [Infinity, 0], [undefined, 0]];
    for (const [delay, ms] of cases) assert.equal(flowDelay({ payload: 1, retry: { delay } }), ms, String(delay));
  });

  it('msg.amqp.retry.delay after the http request node set msg.retry = 0 (where msg.retry.delay cannot be set)', () => {
    const { msg, retry } = delivered();
    msg.retry = 0;
    retry.delay = 1500;
    assert.equal(flowDelay(msg), 1500);
  });

  it('a msg.retry.delay set before the http request node survives it: msg.amqp.retry is the same object', () => {
    const { msg } = delivered();
    (msg.retry as Record<string, unknown>).delay = 1500;
    msg.retry = 0; // what the http request node does
    assert.equal(flowDelay(msg), 1500);
  });

  it('the longest of msg.retry.delay, msg.amqp.retry.delay and the error rule\'s Retry-After', () => {
    const { msg, retry } = delivered();
    msg.retry = { delay: 900 };
    retry.delay = 1200;
    assert.equal(flowDelay(msg), 1200);
    assert.equal(requestedDelay(msg, { kind: 'transient', delayMs: 3000 }), 3000);
    assert.equal(requestedDelay(msg), 1200);
  });

  it('Rarely says a warning the first time, then once in every 1000', () => {
    const said: string[] = [];
    const rarely = new Rarely((text) => said.push(text));
    let made = 0;
    for (let i = 0; i < 2001; i += 1)
      rarely.say(() => {
        made += 1;
        return `w${i}`;
      });
    assert.deepEqual(said, ['w0', 'w1000', 'w2000']);
    assert.equal(made, 3, 'the text is made only when said');
  });
});
