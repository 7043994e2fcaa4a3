/** How each item of a batch is settled from what the flow said, case by case. */
import assert from 'node:assert/strict';
import type { ItemDirective } from '../../../../src/nodes/shared/batch-outcomes';
import { classifiedSettle, outcomeSettle, planBatch, whenClassified, type ItemSettle } from '../../../../src/nodes/shared/batch-plan';

describe('batch plan: a classified failure', () => {
  it('done acks, permanent parks at once naming its rule, transient retries after the longer wait', () => {
    assert.deepEqual(classifiedSettle({ kind: 'done', rule: 'dup' }, 'x', 'e', 500), { action: 'ack', reason: 'x', kind: 'done', delayMs: 0 });
    assert.deepEqual(classifiedSettle({ kind: 'permanent', rule: 'constraint' }, 'x', 'e', 500), { action: 'retry', reason: 'permanent (constraint): x', error: 'e', kind: 'permanent', delayMs: 0 });
    assert.deepEqual(classifiedSettle({ kind: 'transient', delayMs: 2000 }, 'x', 'e', 500), { action: 'retry', reason: 'x', error: 'e', kind: 'transient', delayMs: 2000 });
    assert.deepEqual(classifiedSettle({ kind: 'transient' }, 'x', 'e', 500).delayMs, 500);
  });

  it('a promise (a JSONata rule) settles once it answers', async () => {
    const now = whenClassified({ kind: 'done' }, (c) => classifiedSettle(c, 'r', undefined, 0));
    assert.equal((now as ItemSettle).action, 'ack');
    const later = whenClassified(Promise.resolve({ kind: 'permanent' as const }), (c) => classifiedSettle(c, 'r', undefined, 0));
    assert.ok(later instanceof Promise);
    assert.equal((await later).kind, 'permanent');
  });
});

describe('batch plan: an outcome the flow named', () => {
  it('its reason, else its error text, else the fallback; its error, else the batch error', () => {
    const error = new Error('row 3 broke');
    assert.deepEqual(outcomeSettle({ from: 'outcome', action: 'park', reason: 'mine', error, delayMs: 0 }, 'fb', 'batch'), { action: 'park', reason: 'mine', error, delayMs: 0 });
    assert.deepEqual(outcomeSettle({ from: 'outcome', action: 'park', error, delayMs: 0 }, 'fb', 'batch').reason, 'row 3 broke');
    assert.deepEqual(outcomeSettle({ from: 'outcome', action: 'retry', delayMs: 700 }, 'fb', 'batch'), { action: 'retry', reason: 'fb', error: 'batch', delayMs: 700 });
  });
});

describe('batch plan: every item', () => {
  const node: ItemSettle = { action: 'ack', reason: 'ok', delayMs: 0 };
  const fallback = { reason: 'fb', error: undefined };

  it('outcome, error, node action in place; the node action worked out once', () => {
    let asked = 0;
    const directives: ItemDirective[] = [{ from: 'node' }, { from: 'error', error: 'bad' }, { from: 'outcome', action: 'park', delayMs: 0 }, { from: 'node' }];
    const plan = planBatch(directives, fallback, () => (asked++, node), (index, error) => ({ action: 'retry', reason: `${index}:${String(error)}`, delayMs: 0 }));
    assert.ok(Array.isArray(plan));
    assert.deepEqual(plan.map((p) => [p.action, p.reason]), [['ack', 'ok'], ['retry', '1:bad'], ['park', 'fb'], ['ack', 'ok']]);
    assert.equal(asked, 1);
  });

  it('no node action asked when every item is named', () => {
    const plan = planBatch([{ from: 'outcome', action: 'ack', delayMs: 0 }], fallback, () => assert.fail('not asked'), () => assert.fail('not asked'));
    assert.deepEqual(plan, [{ action: 'ack', reason: 'fb', error: undefined, delayMs: 0 }]);
  });

  it('a promise only when an item waits for one, then all in order', async () => {
    const plan = planBatch([{ from: 'node' }, { from: 'error', error: 'e' }], fallback, () => node, () => Promise.resolve<ItemSettle>({ action: 'park', reason: 'p', delayMs: 0 }));
    assert.ok(plan instanceof Promise);
    assert.deepEqual((await plan).map((p) => p.action), ['ack', 'park']);
  });
});
