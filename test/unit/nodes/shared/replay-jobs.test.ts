import assert from 'node:assert/strict';
import { PacedReplay, type PacedWork } from '../../../../src/lib/parking/paced';
import { ReplayJobs } from '../../../../src/nodes/shared/replay-jobs';

/** A run that waits for its canaries for an hour: running until cancelled. */
function waitingRun(): PacedReplay {
  const work: PacedWork = {
    replay: (_max, hooks) => {
      hooks.replayed();
      return Promise.resolve({ replayed: 1, remaining: 5 });
    },
    parkedAgain: () => Promise.resolve(0),
  };
  return new PacedReplay(work, { rate: 1000, canary: 1, canaryWaitMs: 3_600_000, max: 10 });
}

const info = (id: string) => ({ id, queue: 'q.parking', by: 'alice', selection: 'every message' });

describe('paced replay jobs of a retry config (ReplayJobs)', () => {
  it('lists running jobs first, cancels one by id, and stops all on close with the reason', async () => {
    const jobs = new ReplayJobs();
    const first = waitingRun();
    const second = waitingRun();
    jobs.add(info('a'), first);
    jobs.add(info('b'), second);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(jobs.running()?.finishedAt, null);
    const cancelled = await jobs.cancel('a');
    assert.equal(cancelled?.state, 'cancelled');
    assert.equal(cancelled?.by, 'alice');
    assert.deepEqual(jobs.list().map((job) => job.id), ['b', 'a']);
    assert.equal(await jobs.cancel('nope'), undefined);
    await jobs.stopAll('stopped as its retry config closed');
    assert.match(jobs.get('b')?.message ?? '', /^stopped as its retry config closed while waiting for the canaries/);
    assert.equal(jobs.running(), undefined);
  });

  it('forgets the oldest finished jobs past 20', async () => {
    const jobs = new ReplayJobs();
    for (let i = 0; i < 25; i += 1) {
      const run = waitingRun();
      await run.cancel();
      jobs.add(info(`j${i}`), run);
    }
    assert.equal(jobs.list().length, 20);
    assert.equal(jobs.get('j4'), undefined);
    assert.notEqual(jobs.get('j5'), undefined);
    assert.notEqual(jobs.get('j24'), undefined);
  });
});
