/**
 * The end nodes' reply (step 8 of the walk) with a fake node: done() for a settle, a park sent on with
 * msg.park by the park-publisher and counted on the status, a settle done later matched by its id, and
 * what could not settle: a warning (already settled, channel gone) or an error for a Catch node.
 */
import assert from 'node:assert/strict';
import type { Node, NodeMessage, NodeStatus, SendFunction } from '../../../../src/nodes/shared/node-red';
import { SettleReplies, type Parks } from '../../../../src/nodes/shared/settle-reply';
import { SettleError } from '../../../../src/lib/settle';

function setup(sendsOn: boolean) {
  const statuses: Array<NodeStatus | string> = [];
  const warnings: string[] = [];
  const errors: string[] = [];
  const node = { status: (s: NodeStatus | string) => statuses.push(s), warn: (w: string) => warnings.push(w), error: (e: string) => errors.push(e) } as unknown as Node;
  const replies = new SettleReplies(node, (key) => `t:${key}`, (parks: Parks) => ({ text: `parked ${parks.count} at ${parks.attempt}${parks.permanent ? ' permanent' : ''}` }), sendsOn);
  const sent: NodeMessage[] = [];
  const dones: Array<Error | undefined> = [];
  const send: SendFunction = (msg) => {
    sent.push(msg as NodeMessage);
  };
  const done = (err?: Error) => dones.push(err);
  return { replies, statuses, warnings, errors, sent, dones, send, done };
}

describe('settle replies', () => {
  it('an ack (a retry-settle\'s): done(), nothing sent, no status', () => {
    const { replies, statuses, sent, dones, send, done } = setup(false);
    replies.settled({ done: 'acked', attempt: 1 }, { payload: 1 }, send, done, '');
    assert.deepEqual(dones, [undefined]);
    assert.deepEqual(sent, []);
    assert.deepEqual(statuses, []);
    replies.stop();
  });

  it('a park: counted on the status; the park-publisher sends the msg on with where and why', () => {
    const { replies, statuses, sent, dones, send, done } = setup(true);
    const msg: NodeMessage = { payload: 1 };
    replies.settled({ done: 'parked', attempt: 3, parkedTo: 'q.parking', parkReason: 'max attempts' }, msg, send, done, 'boom', 'permanent');
    assert.deepEqual(sent, [msg]);
    assert.deepEqual(msg.park, { queue: 'q.parking', reason: 'max attempts', attempt: 3 });
    assert.deepEqual(dones, [undefined]);
    assert.deepEqual(statuses, [{ text: 'parked 1 at 3 permanent' }], 'the first park shows at once');
    replies.stop();
  });

  it('a retry-settle parks without sending anything on', () => {
    const { replies, sent, dones, send, done } = setup(false);
    replies.settled({ done: 'parked', attempt: 3, parkedTo: 'q.parking' }, { payload: 1 }, send, done, 'boom');
    assert.deepEqual(sent, []);
    assert.deepEqual(dones, [undefined]);
    replies.stop();
  });

  it('a settle done later is replied to by its id, once; an id nobody waits for is ignored', () => {
    const { replies, dones, send, done } = setup(false);
    replies.wait('n:1', { payload: 1 }, send, done, '');
    replies.later({ done: 'acked', attempt: 1 }, 'n:2');
    assert.deepEqual(dones, []);
    replies.later({ done: 'acked', attempt: 1 }, 'n:1');
    replies.later({ done: 'acked', attempt: 1 }, 'n:1');
    assert.deepEqual(dones, [undefined]);
    replies.stop();
  });

  it('already settled or its channel gone: a warning and done(); a failed park: an error for a Catch node', () => {
    const { replies, statuses, warnings, dones, send, done } = setup(false);
    replies.failed(new SettleError('already settled (acked)', 'already-settled'), done);
    assert.deepEqual(warnings, ['already settled (acked)']);
    assert.deepEqual(dones, [undefined]);
    assert.equal((statuses[0] as NodeStatus).fill, 'yellow');
    replies.wait('n:1', { payload: 1 }, send, done, '');
    replies.later(new SettleError('parking refused', 'broker'), 'n:1');
    assert.equal(dones.length, 2);
    assert.match(String((dones[1] as Error | undefined)?.message), /parking refused/);
    assert.equal((statuses[1] as NodeStatus).fill, 'red');
    replies.stop();
  });
});
