import assert from 'node:assert/strict';
import { PacedReplay, pacedOptionsFrom, type PacedWork } from '../../../src/lib/parking/paced';

/** A parking queue of `depth` messages as a paced replay sees it; `parkedAgain` copies come back after the canaries. */
function queue(depth: number, parkedAgain: number): PacedWork & { passes: number[]; left: number } {
  const work = {
    left: depth,
    passes: [] as number[],
    async replay(max: number, hooks: { before: () => Promise<boolean>; replayed: () => void }) {
      work.passes.push(max);
      let replayed = 0;
      while (replayed < max && work.left > 0) {
        if (!(await hooks.before())) break;
        work.left -= 1;
        replayed += 1;
        hooks.replayed();
      }
      return { replayed, remaining: work.left };
    },
    parkedAgain: () => Promise.resolve(parkedAgain),
  };
  return work;
}

describe('paced replay', () => {
  const fast = { rate: 1000, canaryWaitMs: 0 };

  it('replays the canaries, looks, then the rest', async () => {
    const work = queue(10, 0);
    const run = new PacedReplay(work, { ...fast, canary: 3, max: 100 });
    await run.finished;
    const status = run.status();
    assert.equal(status.state, 'done');
    assert.equal(status.replayed, 10);
    assert.equal(status.canaryReplayed, 3);
    assert.equal(status.parkedAgain, 0);
    assert.deepEqual(work.passes, [3, 97]);
  });

  it('stops after the canaries when any of them was parked again, and says so', async () => {
    const work = queue(10, 1);
    const run = new PacedReplay(work, { ...fast, canary: 2, max: 100 });
    await run.finished;
    const status = run.status();
    assert.equal(status.state, 'stopped');
    assert.equal(status.replayed, 2);
    assert.equal(status.parkedAgain, 1);
    assert.match(status.message ?? '', /1 of the 2 canary messages were parked again: the rest were not replayed/);
    assert.equal(work.left, 8);
  });

  it('a cancel during the canary wait ends it at once; nothing more is replayed', async () => {
    const work = queue(10, 0);
    const run = new PacedReplay(work, { rate: 1000, canary: 1, canaryWaitMs: 3_600_000, max: 100 });
    while (run.status().state !== 'waiting') await new Promise((resolve) => setImmediate(resolve));
    await run.cancel();
    assert.equal(run.status().state, 'cancelled');
    assert.equal(run.status().replayed, 1);
    assert.equal(work.left, 9);
  });

  it('a cancel while running stops between two messages', async () => {
    const work = queue(1000, 0);
    const run = new PacedReplay(work, { rate: 50, canary: 0, canaryWaitMs: 0, max: 1000 });
    while (run.status().replayed < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await run.cancel();
    const status = run.status();
    assert.equal(status.state, 'cancelled');
    assert.equal(work.left, 1000 - status.replayed);
    assert.ok(status.replayed < 1000);
  });

  it('without canaries replays at once at the rate; nothing parked: done with nothing to replay', async () => {
    const empty = new PacedReplay(queue(0, 0), { ...fast, canary: 5, max: 10 });
    await empty.finished;
    assert.equal(empty.status().state, 'done');
    assert.equal(empty.status().message, 'nothing to replay');
  });

  it('a failing pass ends it failed with the error', async () => {
    const work: PacedWork = { replay: () => Promise.reject(new Error('message was returned unroutable')), parkedAgain: () => Promise.resolve(0) };
    const run = new PacedReplay(work, { ...fast, canary: 0, max: 5 });
    await run.finished;
    assert.equal(run.status().state, 'failed');
    assert.match(run.status().message ?? '', /unroutable/);
  });

  it('reads its options from plain fields and refuses what it cannot use', () => {
    assert.deepEqual(pacedOptionsFrom({ rate: '5', canary: 2, canaryWait: 1.5 }, { max: 100 }), { rate: 5, canary: 2, canaryWaitMs: 1500, max: 100 });
    assert.deepEqual(pacedOptionsFrom({}, { max: 7 }), { rate: 10, canary: 0, canaryWaitMs: 30_000, max: 7 });
    assert.throws(() => pacedOptionsFrom({ rate: 0 }, { max: 1 }), /rate .* must be above 0/);
    assert.throws(() => pacedOptionsFrom({ rate: -1 }, { max: 1 }), /rate/);
    assert.throws(() => pacedOptionsFrom({ canary: 1.5 }, { max: 1 }), /canary .* must be a whole number/);
    assert.throws(() => pacedOptionsFrom({ rate: 5000 }, { max: 1 }), /at most 1000/);
  });
});
