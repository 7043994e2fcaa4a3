import assert from 'node:assert/strict';
import { MAX_TIMER_SECONDS, readNumberField, readNumberFields } from '../../../src/lib/rules/number-fields';

describe('number fields of a node definition', () => {
  const prefetch = { label: 'prefetch', fallback: 10, min: 1, max: 65535, integer: true };

  it('reads numbers and numeric strings, and uses the fallback only for a missing or empty field', () => {
    assert.deepEqual(readNumberField(5, prefetch), { value: 5 });
    assert.deepEqual(readNumberField(' 20 ', prefetch), { value: 20 });
    assert.deepEqual(readNumberField(undefined, prefetch), { value: 10 });
    assert.deepEqual(readNumberField('', prefetch), { value: 10 });
  });

  it('refuses what it cannot use, naming the field and the value, never falling back silently', () => {
    assert.deepEqual(readNumberField('0', prefetch), { problem: "prefetch is '0': must be a whole number from 1 to 65535" });
    assert.deepEqual(readNumberField(2.5, prefetch), { problem: 'prefetch is 2.5: must be a whole number from 1 to 65535' });
    assert.deepEqual(readNumberField('abc', { label: 'max attempts', fallback: 3 }), { problem: "max attempts is 'abc': must be a number" });
    assert.deepEqual(readNumberField(true, { label: 'pause', fallback: 5, min: 0, unit: 's' }), { problem: 'pause is true: must be a number of at least 0 s' });
    assert.deepEqual(readNumberField(Infinity, { label: 'pause', fallback: 5, max: 9 }), { problem: 'pause is Infinity: must be a number of at most 9' });
  });

  it('refuses a timer longer than Node.js keeps (it would fire at once)', () => {
    const timeout = { label: 'settle timeout', fallback: 60, min: 0, max: MAX_TIMER_SECONDS, unit: 's' };
    assert.deepEqual(readNumberField(MAX_TIMER_SECONDS, timeout), { value: MAX_TIMER_SECONDS });
    assert.ok('problem' in readNumberField(MAX_TIMER_SECONDS + 1, timeout));
  });

  it('reads several fields and collects every problem', () => {
    const read = readNumberFields({ prefetch: '0', settleTimeout: '-1', parkingWatch: '15' }, {
      prefetch,
      settleTimeout: { label: 'settle timeout', fallback: 60, min: 0 },
      parkingWatch: { label: 'watch parking', fallback: 30, min: 0 },
    });
    assert.deepEqual(read.values, { prefetch: 10, settleTimeout: 60, parkingWatch: 15 });
    assert.deepEqual(read.problems, ["prefetch is '0': must be a whole number from 1 to 65535", "settle timeout is '-1': must be a number of at least 0"]);
  });
});
