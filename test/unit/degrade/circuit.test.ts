/** The kill switch's state machine and the rate limit's token bucket, on a clock the tests move by hand. */
import assert from 'node:assert/strict';
import { Circuit, type CircuitSettings } from '../../../src/lib/degrade';

class Clock {
  ms = 1_000_000;
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

const settings: CircuitSettings = { activation: 10, tripRatio: 0.5, windowMs: 60_000, restartMs: 30_000, restartMaxMs: 100_000, probes: 3 };

function circuit(overrides: Partial<CircuitSettings> = {}): { circuit: Circuit; clock: Clock } {
  const clock = new Clock();
  return { circuit: new Circuit({ ...settings, ...overrides }, clock.now), clock };
}

/** Records `n` settles, failed or not, and returns the last change. */
function record(c: Circuit, n: number, failed: boolean): ReturnType<Circuit['record']> {
  let last: ReturnType<Circuit['record']>;
  for (let i = 0; i < n; i += 1) last = c.record(failed) ?? last;
  return last;
}

describe('the kill switch (circuit breaker)', () => {
  it('does not trip before the activation threshold, however many fail', () => {
    const { circuit: c } = circuit();
    assert.equal(record(c, 9, true), undefined);
    assert.equal(c.state, 'closed');
    const change = c.record(true);
    assert.deepEqual(change, { state: 'open', previous: 'closed', reason: '10 of 10 settles failed (100 %) in the last 60 s', failures: 10, settles: 10, restartInS: 30 });
    assert.equal(c.state, 'open');
  });

  it('trips when the share of failures in the window reaches the trip ratio, not below it', () => {
    const { circuit: c } = circuit();
    record(c, 6, false);
    assert.equal(record(c, 5, true), undefined, '5 of 11 is below 50 %');
    const change = c.record(true);
    assert.equal(change?.state, 'open', '6 of 12 is 50 %');
    assert.equal(change?.failures, 6);
    assert.equal(change?.settles, 12);
  });

  it('a success can trip it too, once it brings the window to the activation threshold', () => {
    const { circuit: c } = circuit();
    record(c, 9, true);
    assert.equal(c.record(false)?.state, 'open', '9 of 10 failed');
  });

  it('slides: settles older than the window no longer count', () => {
    const { circuit: c, clock } = circuit();
    record(c, 8, false);
    clock.advance(30_000);
    record(c, 5, true); // 5 of 13, below 50 %
    assert.equal(c.state, 'closed');
    clock.advance(31_000); // the 8 successes fell out of the window
    assert.deepEqual(c.window, { failures: 5, settles: 5 });
    record(c, 4, true);
    assert.equal(c.state, 'closed', '9 settles: below the activation threshold');
    assert.equal(c.record(true)?.state, 'open');
  });

  it('a window longer than the pause forgets everything after it', () => {
    const { circuit: c, clock } = circuit();
    record(c, 9, true);
    clock.advance(10 * 60_000);
    assert.deepEqual(c.window, { failures: 0, settles: 0 });
    assert.equal(c.record(true), undefined);
  });

  it('opens, probes after its restart delay, and closes after the probes succeed in a row', () => {
    const { circuit: c, clock } = circuit();
    record(c, 10, true);
    assert.equal(c.probeInMs, 30_000);
    clock.advance(20_000);
    assert.equal(c.probeInMs, 10_000);
    assert.equal(c.record(true), undefined, 'settles of messages already in the flow do not count while open');
    assert.deepEqual(c.probe(), { state: 'probing', previous: 'open', reason: 'restart timeout passed', failures: 0, settles: 0 });
    assert.equal(c.record(false), undefined);
    assert.equal(c.record(false), undefined);
    assert.equal(c.probed, 2);
    assert.deepEqual(c.record(false), { state: 'closed', previous: 'probing', reason: '3 probes succeeded', failures: 0, settles: 0 });
    assert.deepEqual(c.window, { failures: 0, settles: 0 }, 'the window starts anew');
  });

  it('a failure while probing opens it again, with the restart delay doubled on each trip in a row, up to its cap', () => {
    const { circuit: c } = circuit();
    assert.equal(record(c, 10, true)?.restartInS, 30);
    c.probe();
    c.record(false);
    const again = c.record(true);
    assert.deepEqual(again, { state: 'open', previous: 'probing', reason: 'probe failed', failures: 0, settles: 0, restartInS: 60 });
    c.probe();
    assert.equal(c.record(true)?.restartInS, 100, '120 s capped at 100 s');
    c.probe();
    assert.equal(c.record(true)?.restartInS, 100);
    // Closed by its probes: the next trip starts from the first delay again.
    c.probe();
    record(c, 3, false);
    assert.equal(c.state, 'closed');
    assert.equal(record(c, 10, true)?.restartInS, 30);
  });

  it('the restart delay: doubled per trip in a row, capped', () => {
    assert.deepEqual([1, 2, 3, 4, 5].map((n) => Circuit.restartDelay(settings, n)), [30_000, 60_000, 100_000, 100_000, 100_000]);
  });

  it('probe() does nothing unless open; reset() closes it by hand from open or probing', () => {
    const { circuit: c } = circuit();
    assert.equal(c.probe(), undefined);
    assert.equal(c.reset(), undefined, 'already closed');
    record(c, 10, true);
    assert.deepEqual(c.reset(), { state: 'closed', previous: 'open', reason: 'resumed by hand', failures: 0, settles: 0 });
    record(c, 10, true);
    c.probe();
    assert.equal(c.reset()?.previous, 'probing');
    assert.equal(record(c, 10, true)?.restartInS, 30, 'a reset by hand starts the doubling anew');
  });

  it('trip ratio 1: only a window where every settle failed trips it', () => {
    const { circuit: c } = circuit({ tripRatio: 1, activation: 3 });
    c.record(false);
    assert.equal(record(c, 20, true), undefined);
    const { circuit: d } = circuit({ tripRatio: 1, activation: 3 });
    assert.equal(record(d, 3, true)?.state, 'open');
  });
});
