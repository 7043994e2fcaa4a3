/**
 * What both end nodes share (step 5 of the walk), with a fake session's settles and the real replies
 * on a fake node: the settle goes to the session that issued the id, its outcome to the reply at once,
 * a settle done later waits for its id, one that cannot happen is reported.
 */
import assert from 'node:assert/strict';
import type { DeliveryTarget } from '../../../../src/nodes/shared/consumer-sessions';
import type { Node, NodeMessage } from '../../../../src/nodes/shared/node-red';
import { EndNode } from '../../../../src/nodes/shared/settle-node';
import { SettleReplies } from '../../../../src/nodes/shared/settle-reply';
import { SettleError, type SettleLater, type SettleOutcome } from '../../../../src/lib/settle';

function setup(answer: (later: SettleLater) => SettleOutcome | undefined) {
  const calls: unknown[][] = [];
  let laterFn: SettleLater | undefined;
  const settles = {
    settleNow: (...args: unknown[]) => {
      calls.push(args.slice(0, 5));
      laterFn = args[5] as SettleLater;
      return answer(laterFn);
    },
  };
  const target = { deliveryId: 'n:1', config: 'cfg', session: { settles } } as unknown as DeliveryTarget;
  const warnings: string[] = [];
  const node = { status: () => undefined, warn: (w: string) => warnings.push(w), error: () => undefined } as unknown as Node;
  const replies = new SettleReplies(node, (key) => key, () => ({}), false);
  const dones: Array<Error | undefined> = [];
  const end = new EndNode(replies);
  const settle = (msg: NodeMessage, how: 'ack' | 'retry', why = '', kind?: 'transient' | 'permanent') => end.settle(target, msg, () => undefined, (err?: Error) => dones.push(err), how, why, kind);
  return { calls, dones, warnings, settle, later: () => laterFn!, replies };
}

describe('end node settle', () => {
  it('an ack goes to the session\'s settles by id, without failure details, and is done at once', () => {
    const { calls, dones, settle, replies } = setup(() => ({ done: 'acked', attempt: 1 }));
    settle({ payload: 1, error: { message: 'ignored' } }, 'ack');
    assert.deepEqual(calls, [['n:1', 'ack', '', undefined, undefined]]);
    assert.deepEqual(dones, [undefined]);
    replies.stop();
  });

  it('a retry carries the msg\'s error as failure details and what the error rules made of it', () => {
    const { calls, settle, replies } = setup(() => ({ done: 'retried', attempt: 1 }));
    settle({ payload: 1, error: { message: 'timeout talking to the API' } }, 'retry', 'timeout', 'transient');
    const [id, how, why, failure, kind] = calls[0]!;
    assert.deepEqual([id, how, why, kind], ['n:1', 'retry', 'timeout', 'transient']);
    assert.match(JSON.stringify(failure), /timeout talking to the API/);
    replies.stop();
  });

  it('a copy is done only when its outcome comes later, for its id', () => {
    const { dones, settle, later, replies } = setup(() => undefined);
    settle({ payload: 1 }, 'retry', 'x');
    assert.deepEqual(dones, []);
    later()({ done: 'parked', attempt: 3, parkedTo: 'q.parking' }, 'n:1');
    assert.deepEqual(dones, [undefined]);
    replies.stop();
  });

  it('a settle that throws is reported: an unknown id is a warning and done()', () => {
    const { dones, warnings, settle, replies } = setup(() => {
      throw new SettleError('unknown delivery n:1', 'unknown');
    });
    settle({ payload: 1 }, 'ack');
    assert.deepEqual(warnings, ['unknown delivery n:1']);
    assert.deepEqual(dones, [undefined]);
    replies.stop();
  });
});
