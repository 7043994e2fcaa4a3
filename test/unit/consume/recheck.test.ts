/** The parts a ConsumerSession owns, each on its own: why it pauses, its setups' re-checks, its channel. */
import assert from 'node:assert/strict';
import { Recheck, recheckDelay } from '../../../src/lib/consume/recheck';

describe('recheckDelay', () => {
  it('2 s doubled per attempt up to 60 s, without jitter at the middle of the random range', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 20].map((n) => recheckDelay(n, () => 0.5)), [2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });
  it('spread by 10 % either way, never past 60 s', () => {
    assert.equal(recheckDelay(1, () => 0), 1800);
    assert.equal(recheckDelay(1, () => 1), 2200);
    assert.equal(recheckDelay(9, () => 1), 60_000);
  });
});

describe('Recheck', () => {
  it('runs one setup at a time: a second asked for meanwhile is dropped', async () => {
    const recheck = new Recheck(() => undefined);
    let runs = 0;
    let finish: () => void = () => undefined;
    const first = recheck.once(() => {
      runs += 1;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    await recheck.once(() => {
      runs += 1;
      return Promise.resolve();
    });
    assert.equal(runs, 1);
    finish();
    await first;
    await recheck.once(() => {
      runs += 1;
      return Promise.resolve();
    });
    assert.equal(runs, 2);
  });

  it('a failed setup frees the next one', async () => {
    const recheck = new Recheck(() => undefined);
    await assert.rejects(recheck.once(() => Promise.reject(new Error('no'))), /no/);
    let ran = false;
    await recheck.once(() => Promise.resolve(void (ran = true)));
    assert.equal(ran, true);
  });

  it('each re-check waits the next attempt’s delay; a success starts them over', async () => {
    const attempts: number[] = [];
    let due: () => void = () => undefined;
    const recheck = new Recheck(
      () => due(),
      (attempt) => (attempts.push(attempt), 0),
    );
    for (let i = 0; i < 3; i += 1) await new Promise<void>((resolve) => ((due = resolve), recheck.schedule()));
    recheck.succeeded();
    await new Promise<void>((resolve) => ((due = resolve), recheck.schedule()));
    assert.deepEqual(attempts, [1, 2, 3, 1]);
  });

  it('a re-check is dropped by a setup that starts meanwhile, and by stop', async () => {
    // Timers by hand: which are armed, which were cleared.
    const armed = new Set<number>();
    let next = 0;
    const timers = {
      set: (_due: () => void, ms: number): number => {
        assert.equal(ms, 0);
        next += 1;
        armed.add(next);
        return next;
      },
      clear: (timer: unknown): void => {
        armed.delete(timer as number);
      },
    };
    const recheck = new Recheck(
      () => assert.fail('no re-check is due'),
      () => 0,
      timers,
    );
    recheck.schedule();
    assert.equal(armed.size, 1);
    await recheck.once(() => Promise.resolve());
    assert.equal(armed.size, 0, 'the setup dropped the re-check');
    recheck.schedule();
    assert.equal(armed.size, 1);
    recheck.stop();
    assert.equal(armed.size, 0, 'stop dropped the re-check');
  });
});
