/** A batch msg at a retry-settle: what each item is settled as, when it is split, and when nothing is settled. */
import assert from 'node:assert/strict';
import { ErrorClassifier } from '../../../../src/lib/classify';
import type { BatchAmqp, BatchItem } from '../../../../src/nodes/shared/batch-msg';
import type { ItemSettle } from '../../../../src/nodes/shared/batch-plan';
import type { BatchSettler } from '../../../../src/nodes/shared/batch-settle';
import type { DeliveryTarget, Resend, targetFinder } from '../../../../src/nodes/shared/consumer-sessions';
import type { NodeMessage } from '../../../../src/nodes/shared/node-red';
import type { SettleReplies } from '../../../../src/nodes/shared/settle-reply';
import { RetrySettleBatches } from '../../../../src/nodes/retry-settle/batch';

const RULES = [
  { name: 'constraint', match: 'code', value: '23514', kind: 'permanent' },
  { name: 'down', match: 'code', value: 'ECONNREFUSED', kind: 'transient' },
  { name: 'duplicate', match: 'code', value: '23505', kind: 'done' },
];

function batchOfSize(size: number): BatchAmqp {
  const items = Array.from({ length: size }, (_, i) => ({ deliveryId: `d:${i}`, retry: { attempt: 1 } }) as unknown as BatchItem);
  return { config: 'cfg', queue: 'q', batch: { id: 'b', size, split: 0 }, items };
}

function harness(action: 'ack' | 'retry', options: { bisect?: boolean; rules?: unknown[]; resend?: boolean } = {}) {
  const plans: ItemSettle[][] = [];
  const failures: unknown[] = [];
  const warnings: string[] = [];
  const resent: NodeMessage[] = [];
  let dones = 0;
  const resend: Resend = (m) => resent.push(m);
  const sessions = { classifier: new ErrorClassifier(options.rules ?? RULES), resendOf: () => (options.resend === false ? undefined : resend) };
  const find = (() => ({ deliveryId: 'd:0', config: 'cfg', sessions, session: {} }) as unknown as DeliveryTarget) as ReturnType<typeof targetFinder>;
  const batches = new RetrySettleBatches({
    action,
    reason: 'node reason',
    bisect: options.bisect ?? false,
    find,
    replies: { failed: (err: unknown) => failures.push(err) } as unknown as SettleReplies,
    settler: { settle: (_b: BatchAmqp, plan: ItemSettle[]) => plans.push(plan) } as unknown as BatchSettler,
    warn: (text) => warnings.push(text),
    checkWait: () => undefined,
  });
  const input = (msg: NodeMessage, size = 4): void => batches.input(batchOfSize(size), { payload: Array.from({ length: size }, (_, i) => ({ n: i })), ...msg }, () => undefined, () => dones++);
  return { plans, failures, warnings, resent, input, dones: () => dones };
}

const summary = (plan: ItemSettle[] | undefined) => plan?.map((p) => `${p.action}${p.kind ? `/${p.kind}` : ''}`);

describe('retry-settle: a batch msg', () => {
  it('ack: every item acked, but per-item errors classified by the rules (ack mode too)', () => {
    const h = harness('ack');
    h.input({ errors: { 1: { code: '23514', message: 'bad row' }, 2: 'timeout' }, outcomes: { 3: 'park' } });
    assert.deepEqual(summary(h.plans[0]), ['ack', 'retry/permanent', 'retry/transient', 'park']);
    assert.equal(h.plans[0]![1]!.reason, 'permanent (constraint): bad row');
  });

  it('retry: the whole batch error classified once for every item not named', () => {
    const h = harness('retry');
    h.input({ error: { code: '23505', message: 'dup' }, outcomes: ['ack'] });
    assert.deepEqual(summary(h.plans[0]), ['ack', 'ack/done', 'ack/done', 'ack/done']);
  });

  it('retry without rules: every item retried, transient', () => {
    const h = harness('retry', { rules: [] });
    h.input({ error: 'boom', errors: { 0: { code: '23514' } } });
    assert.deepEqual(summary(h.plans[0]), ['retry/transient', 'retry/transient', 'retry/transient', 'retry/transient']);
  });

  it('an unusable index: the error, nothing settled', () => {
    const h = harness('ack');
    h.input({ outcomes: { 4: 'ack' } });
    assert.deepEqual(h.plans, []);
    assert.match(String(h.failures[0]), /msg\.outcomes\[4\]: out of range/);
  });

  it('a JSONata-like rule that answers later: the plan waits for it, then settles every item', async () => {
    const jsonata = () => (input: { error?: unknown }) => Promise.resolve(input.error === 'x');
    const h = harness('retry');
    const rules = new ErrorClassifier([{ name: 'late', match: 'jsonata', value: 'x', kind: 'permanent' }], jsonata);
    const batches = new RetrySettleBatches({
      action: 'retry', reason: '', bisect: false,
      find: (() => ({ sessions: { classifier: rules } })) as unknown as ReturnType<typeof targetFinder>,
      replies: {} as unknown as SettleReplies,
      settler: { settle: (_b: BatchAmqp, plan: ItemSettle[]) => h.plans.push(plan) } as unknown as BatchSettler,
      warn: () => undefined, checkWait: () => undefined,
    });
    batches.input(batchOfSize(2), { payload: [1, 2], errors: ['x'] }, () => undefined, () => undefined);
    assert.deepEqual(h.plans, [], 'not before the rule answered');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(summary(h.plans[0]), ['retry/permanent', 'retry/transient']);
  });
});

describe('retry-settle: bisect', () => {
  it('a batch that failed as a whole (permanent, or no rule matched) is split, not settled; done() once', () => {
    for (const error of [{ code: '23514' }, 'something else']) {
      const h = harness('retry', { bisect: true });
      h.input({ error });
      assert.deepEqual(h.plans, []);
      assert.deepEqual(h.resent.map((m) => (m.amqp as BatchAmqp).items.length), [2, 2]);
      assert.equal(h.dones(), 1);
    }
  });

  it('a transient rule matched (the database is down): every item retried, not split', () => {
    const h = harness('retry', { bisect: true });
    h.input({ error: { code: 'ECONNREFUSED' } });
    assert.deepEqual(h.resent, []);
    assert.deepEqual(summary(h.plans[0]), ['retry/transient', 'retry/transient', 'retry/transient', 'retry/transient']);
  });

  it('a single item: settled as a single retry (permanent: parked at once)', () => {
    const h = harness('retry', { bisect: true });
    h.input({ error: { code: '23514' } }, 1);
    assert.deepEqual(h.resent, []);
    assert.deepEqual(summary(h.plans[0]), ['retry/permanent']);
  });

  it('bisect off, or per-item answers: not split', () => {
    const off = harness('retry');
    off.input({ error: { code: '23514' } });
    assert.deepEqual([off.resent.length, summary(off.plans[0])], [0, ['retry/permanent', 'retry/permanent', 'retry/permanent', 'retry/permanent']]);
    const answered = harness('retry', { bisect: true });
    answered.input({ error: 'x', outcomes: {} });
    assert.deepEqual(answered.resent, []);
  });

  it('a consumer that cannot resend: retried as a whole, transient, with a warning', () => {
    const h = harness('retry', { bisect: true, resend: false });
    h.input({ error: { code: '23514' } });
    assert.deepEqual(summary(h.plans[0]), ['retry/transient', 'retry/transient', 'retry/transient', 'retry/transient']);
    assert.match(h.warnings[0] ?? '', /batch b: its consumer cannot send halves again .* the 4 items are retried as a whole/);
  });
});
