/**
 * The settle deadlines alone: what their retry of a delivery nobody settled in time is told when that
 * retry cannot happen. Each way it fails is said, with its cause, except a settle that came first.
 */
import assert from 'node:assert/strict';
import { DeliveryRegistry } from '../../../src/lib/consume/registry';
import { SettleDeadlines } from '../../../src/lib/consume/settle-deadlines';
import { SettleError, type SettleOutcome, type TrackedDelivery } from '../../../src/lib/settle';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Deadlines of 20 ms whose retry fails with `failure`; what they said, once the delivery's deadline passed. */
async function timedOutWith(failure: Error): Promise<{ warnings: string[]; errors: string[] }> {
  const registry = new DeliveryRegistry<TrackedDelivery>('node1', 4);
  const warnings: string[] = [];
  const errors: string[] = [];
  let retried = 0;
  const deadlines = new SettleDeadlines(registry, 20, {
    retry: (): Promise<SettleOutcome> => {
      retried += 1;
      return Promise.reject(failure);
    },
    release: () => undefined,
    warning: (text) => warnings.push(text),
    error: (text) => errors.push(text),
  });
  const id = registry.nextId();
  registry.add({ id, deadline: deadlines.started() } as TrackedDelivery);
  for (let i = 0; i < 100 && retried === 0; i += 1) await sleep(5);
  await sleep(5);
  deadlines.clear();
  assert.equal(retried, 1);
  return { warnings, errors };
}

describe('settle deadlines', () => {
  it('a retry whose copy failed (back to the queue after a pause) is an error with the cause: never silent', async () => {
    const failed = new SettleError("could not park message node1:1 in 'q.parking': publish to queue 'q.parking' failed: channel closed; it goes back to 'q' after a pause", 'broker');
    const { warnings, errors } = await timedOutWith(failed);
    assert.deepEqual(warnings, []);
    assert.deepEqual(errors, [`message node1:1 was not settled within 0.02 s, and its retry did not happen: ${failed.message}`]);
  });

  it('a retry whose channel was lost meanwhile is a warning with the cause (the broker redelivers it)', async () => {
    const { warnings, errors } = await timedOutWith(new SettleError('message node1:1: its channel was lost before this retry; the broker redelivers it (attempt 1 will be repeated)', 'stale'));
    assert.deepEqual(errors, []);
    assert.match(warnings.join('\n'), /^message node1:1 was not settled within 0\.02 s, and its retry did not happen: message node1:1: its channel was lost before this retry/);
  });

  it('a delivery the flow settled first is not mentioned (its own settle said how it ended)', async () => {
    const { warnings, errors } = await timedOutWith(new SettleError('message node1:1 was already settled (acked); this retry is ignored', 'already-settled'));
    assert.deepEqual([...warnings, ...errors], []);
  });

  it('anything else is an error', async () => {
    const { errors } = await timedOutWith(new Error('boom'));
    assert.deepEqual(errors, ['message node1:1 was not settled within 0.02 s, and its retry did not happen: boom']);
  });
});
