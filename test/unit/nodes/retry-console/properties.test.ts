import assert from 'node:assert/strict';
import { CONSOLE_NUMBERS, consoleSettings } from '../../../../src/nodes/retry-console/properties';

describe('retry-console properties', function () {
  it('reads a node saved with its defaults', function () {
    assert.deepEqual(consoleSettings({ every: '10', minutes: '60', series: '' }), { every: 10, minutes: 60, series: [''], problem: undefined });
  });

  it('reads a node saved without its properties at their fallbacks, every series', function () {
    assert.deepEqual(consoleSettings({}), { every: CONSOLE_NUMBERS.every.fallback, minutes: CONSOLE_NUMBERS.minutes.fallback, series: [], problem: undefined });
  });

  it('splits the series it sends', function () {
    assert.deepEqual(consoleSettings({ series: 'acked, retried,parked' }).series, ['acked', 'retried', 'parked']);
  });

  it('says the first bad number and falls back: every to 0 (only when asked), minutes to its default', function () {
    const bad = consoleSettings({ every: '-1', minutes: '5000' });
    assert.equal(bad.every, 0);
    assert.equal(bad.minutes, CONSOLE_NUMBERS.minutes.fallback);
    assert.match(String(bad.problem), /every/);
    const minutes = consoleSettings({ every: '5', minutes: '1.5' });
    assert.equal(minutes.every, 5);
    assert.match(String(minutes.problem), /history/);
  });
});
