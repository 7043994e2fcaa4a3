/** Settling a batch's items one by one, and the one reply for the batch. */
import assert from 'node:assert/strict';
import { SettleError, type SettleAction, type SettleLater, type SettleOutcome } from '../../../../src/lib/settle';
import type { BatchAmqp, BatchItem } from '../../../../src/nodes/shared/batch-msg';
import type { ItemSettle } from '../../../../src/nodes/shared/batch-plan';
import { batchFailure, BatchSettler, indexList } from '../../../../src/nodes/shared/batch-settle';
import type { DeliveryTarget, targetFinder } from '../../../../src/nodes/shared/consumer-sessions';
import type { Node, NodeMessage, NodeStatus } from '../../../../src/nodes/shared/node-red';
import { SettleReplies } from '../../../../src/nodes/shared/settle-reply';

type Answer = SettleOutcome | 'later' | Error;

/** A session whose settles answer as `answers` say (by delivery id), recording what was asked. */
function harness(answers: Record<string, Answer>) {
  const asked: Array<[string, SettleAction, string]> = [];
  const laters: Array<[SettleLater, string]> = [];
  const finds: string[] = [];
  let together = 0;
  /** A session's settles: this one issued every id but those of another session (`other…`, which `others` settles) and of a consumer gone (`gone…`). */
  const settlesOf = (mine: (id: string) => boolean) => ({
    issued: (id: string) => mine(id),
    together<T>(run: () => T): T {
      together += 1;
      return run();
    },
    settleNow(id: string, action: SettleAction, reason: string, _f: unknown, _k: unknown, later: SettleLater): SettleOutcome | undefined {
      asked.push([id, action, reason]);
      const answer = answers[id] ?? { done: action === 'ack' ? 'acked' : 'retried', attempt: 1 };
      if (answer instanceof Error) throw answer;
      if (answer === 'later') {
        laters.push([later, id]);
        return undefined;
      }
      return answer;
    },
  });
  const settles = settlesOf((id) => !id.startsWith('other') && !id.startsWith('gone'));
  const others = settlesOf((id) => id.startsWith('other'));
  const find = ((_config: string | undefined, id: string) => {
    finds.push(id);
    return id.startsWith('gone') ? undefined : ({ deliveryId: id, session: { settles: id.startsWith('other') ? others : settles } } as unknown as DeliveryTarget);
  }) as ReturnType<typeof targetFinder>;
  const warnings: unknown[] = [];
  const statuses: NodeStatus[] = [];
  const node = { warn: (t: unknown) => warnings.push(t), status: (s: NodeStatus) => statuses.push(s) } as unknown as Node;
  const replies = new SettleReplies(node, (key) => key, (parks) => ({ text: `parked ${parks.count} at ${parks.attempt}` }), true);
  const sent: NodeMessage[] = [];
  const dones: Array<Error | undefined> = [];
  const settler = new BatchSettler(find, replies, true);
  const run = (ids: string[], plan: ItemSettle[]): NodeMessage => {
    const batch: BatchAmqp = { config: 'cfg', queue: 'q', batch: { id: 'b1', size: ids.length, split: 0 }, items: ids.map((deliveryId) => ({ deliveryId }) as BatchItem) };
    const msg: NodeMessage = { payload: ids, amqp: batch };
    settler.settle(batch, plan, msg, (m) => sent.push(m as NodeMessage), (err) => dones.push(err));
    return msg;
  };
  return { asked, laters, warnings, statuses, sent, dones, run, replies, finds, together: () => together };
}

const ack: ItemSettle = { action: 'ack', reason: '', delayMs: 0 };
const park: ItemSettle = { action: 'park', reason: 'bad row', delayMs: 0 };

describe('batch settle', () => {
  it('every item settled once, in order, done() once', () => {
    const h = harness({});
    h.run(['a', 'b', 'c'], [ack, ack, ack]);
    assert.deepEqual(h.asked.map(([id, action]) => [id, action]), [['a', 'ack'], ['b', 'ack'], ['c', 'ack']]);
    assert.deepEqual(h.dones, [undefined]);
    assert.deepEqual(h.sent, [], 'nothing parked: nothing sent on');
    h.replies.stop();
  });

  it('the items\' session is looked up once for the batch, and its settles run together', () => {
    const h = harness({});
    h.run(['a', 'b', 'c', 'd'], [ack, ack, ack, ack]);
    assert.deepEqual(h.finds, ['a']);
    assert.equal(h.together(), 1);
    assert.deepEqual(h.dones, [undefined]);
    h.replies.stop();
  });

  it('an item the first item\'s session did not issue is settled through the session that did', () => {
    const h = harness({});
    h.run(['a', 'other-b', 'c'], [ack, ack, ack]);
    assert.deepEqual(h.finds, ['a', 'other-b']);
    assert.deepEqual(h.asked.map(([id]) => id), ['a', 'other-b', 'c']);
    assert.deepEqual(h.dones, [undefined]);
    h.replies.stop();
  });

  it('done() waits for the copies; the msg goes on once with msg.park listing the parked items by index', () => {
    const h = harness({ b: 'later', c: 'later' });
    h.run(['a', 'b', 'c'], [ack, park, park]);
    assert.deepEqual(h.dones, [], 'two copies not confirmed yet');
    const [[later]] = h.laters as [[SettleLater, string]];
    later({ done: 'parked', attempt: 2, parkedTo: 'parking', parkReason: 'bad row' }, 'c');
    assert.deepEqual(h.dones, []);
    later({ done: 'parked', attempt: 1, parkedTo: 'parking', parkReason: 'bad row' }, 'b');
    later({ done: 'parked', attempt: 1 }, 'b'); // a second answer for the same id is ignored
    assert.deepEqual(h.dones, [undefined]);
    assert.equal(h.sent.length, 1);
    assert.deepEqual(h.sent[0]!.park, [
      { index: 1, queue: 'parking', reason: 'bad row', attempt: 1 },
      { index: 2, queue: 'parking', reason: 'bad row', attempt: 2 },
    ]);
    assert.equal(h.statuses.at(-1)?.text, 'parked 2 at 1', 'the status counts items');
    h.replies.stop();
  });

  it('settled twice: every item already settled, one warning naming the indexes, done() without error', () => {
    const h = harness({ a: new SettleError('message a was already acked', 'already-settled'), b: new SettleError('message b was already acked', 'already-settled') });
    h.run(['a', 'b'], [ack, ack]);
    assert.deepEqual(h.warnings, ['batch b1: items 0, 1 not settled: message a was already acked']);
    assert.deepEqual(h.dones, [undefined]);
    h.replies.stop();
  });

  it("a broker failure of one item is an error for a Catch node naming it; the others' settles stand", () => {
    const h = harness({ b: 'later' });
    h.run(['a', 'b', 'gone:1'], [ack, park, ack]);
    const [[later]] = h.laters as [[SettleLater, string]];
    later(new Error('parking publish failed'), 'b');
    assert.equal(h.dones.length, 1);
    assert.equal(h.dones[0]?.message, 'batch b1: item 1 not settled: parking publish failed', 'the hard failure named, the gone consumer only behind it');
    assert.deepEqual(h.asked.map(([id]) => id), ['a', 'b']);
    h.replies.stop();
  });
});

describe('batch settle: failures in one report', () => {
  it('none: no failure', () => {
    assert.equal(batchFailure('b', []), undefined);
  });

  it('a long list of indexes is cut', () => {
    assert.equal(indexList([1, 2, 3]), '1, 2, 3');
    assert.equal(indexList(Array.from({ length: 25 }, (_, i) => i)), '0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 and 5 more');
  });

  it('only settle errors of the broker kind or other errors make an error; else a warning of the first kind', () => {
    const warning = batchFailure('b', [{ index: 3, err: new SettleError('gone', 'stale') }]);
    assert.ok(warning instanceof SettleError && warning.kind === 'stale' && warning.message === 'batch b: item 3 not settled: gone');
    const error = batchFailure('b', [{ index: 0, err: new SettleError('gone', 'stale') }, { index: 4, err: new SettleError('no channel', 'broker') }]);
    assert.ok(error && !(error instanceof SettleError));
    assert.equal(error.message, 'batch b: item 4 not settled: no channel');
  });
});
