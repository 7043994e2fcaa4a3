/** What the flow says about each item of a batch msg: msg.outcomes and msg.errors read and checked, case by case. */
import assert from 'node:assert/strict';
import { batchDirectives, BatchInputError, entriesByIndex, errorDirective, outcomeDirective } from '../../../../src/nodes/shared/batch-outcomes';

function problem(value: unknown): string {
  assert.ok(value instanceof BatchInputError, `expected a BatchInputError, got ${JSON.stringify(value)}`);
  return value.message;
}

describe('batch outcomes: entries by index', () => {
  it('absent, null: no entries', () => {
    assert.deepEqual(entriesByIndex('outcomes', undefined, 3), []);
    assert.deepEqual(entriesByIndex('outcomes', null, 3), []);
  });

  it('an array aligned with the items: its holes, null and undefined entries are not named', () => {
    // eslint-disable-next-line no-sparse-arrays
    assert.deepEqual(entriesByIndex('outcomes', ['ack', , null, undefined, 'park'], 5), [[0, 'ack'], [4, 'park']]);
  });

  it('an object keyed by index', () => {
    assert.deepEqual(entriesByIndex('errors', { 2: 'boom', 0: 'bad' }, 3), [[0, 'bad'], [2, 'boom']]);
  });

  it('an index out of range is named, for an array and an object', () => {
    assert.match(problem(entriesByIndex('outcomes', ['ack', 'ack', 'ack'], 2)), /^msg\.outcomes\[2\]: out of range, the batch has 2 items \(0 to 1\)$/);
    assert.match(problem(entriesByIndex('errors', { 50: 'x' }, 50)), /^msg\.errors\[50\]: out of range/);
  });

  it('an array longer than the batch is fine when its extra entries name nothing', () => {
    assert.deepEqual(entriesByIndex('outcomes', ['ack', null, undefined], 1), [[0, 'ack']]);
  });

  it('a key that is not an integer index is named', () => {
    for (const key of ['-1', '1.5', 'first', '01', ' 1']) {
      const text = problem(entriesByIndex('outcomes', { [key]: 'ack' }, 5));
      assert.ok(text.startsWith(`msg.outcomes[${JSON.stringify(key)}]: not an item index (an integer from 0 to 4)`), text);
    }
  });

  it('neither an array nor an object', () => {
    assert.match(problem(entriesByIndex('outcomes', 'ack', 3)), /^msg\.outcomes must be an array .* not string$/);
    assert.match(problem(entriesByIndex('errors', 7, 3)), /not number$/);
  });
});

describe('batch outcomes: one outcome', () => {
  it('a name among ack, retry, park', () => {
    for (const action of ['ack', 'retry', 'park'] as const) assert.deepEqual(outcomeDirective(0, action), { from: 'outcome', action, delayMs: 0 });
  });

  it('an object with its reason, error and delay', () => {
    const error = { message: 'boom', code: '23505' };
    assert.deepEqual(outcomeDirective(3, { action: 'retry', reason: 'later', error, delay: '1500' }), { from: 'outcome', action: 'retry', reason: 'later', error, delayMs: 1500 });
    assert.deepEqual(outcomeDirective(3, { action: 'park' }), { from: 'outcome', action: 'park', reason: undefined, error: undefined, delayMs: 0 });
  });

  it('anything else names the index', () => {
    assert.match(problem(outcomeDirective(4, 'done')), /^msg\.outcomes\[4\]: 'done' is not an outcome/);
    assert.match(problem(outcomeDirective(4, 1)), /^msg\.outcomes\[4\]: not an outcome/);
    assert.match(problem(outcomeDirective(4, ['ack'])), /^msg\.outcomes\[4\]: not an outcome/);
    assert.match(problem(outcomeDirective(4, { reason: 'x' })), /^msg\.outcomes\[4\]\.action: missing is not one of 'ack', 'retry', 'park'$/);
    assert.match(problem(outcomeDirective(4, { action: 'nack' })), /^msg\.outcomes\[4\]\.action: "nack" is not one of/);
    assert.match(problem(outcomeDirective(4, { action: 'ack', reason: 5 })), /^msg\.outcomes\[4\]\.reason: not a string$/);
    assert.match(problem(outcomeDirective(4, { action: 'retry', delay: -1 })), /^msg\.outcomes\[4\]\.delay: not a number/);
    assert.match(problem(outcomeDirective(4, { action: 'retry', delay: 'soon' })), /^msg\.outcomes\[4\]\.delay: not a number/);
  });
});

describe('batch outcomes: one error', () => {
  it('a string or an Error-like object', () => {
    assert.deepEqual(errorDirective(0, 'boom'), { from: 'error', error: 'boom' });
    const e = new Error('boom');
    assert.deepEqual(errorDirective(0, e), { from: 'error', error: e });
  });

  it('anything else names the index', () => {
    assert.match(problem(errorDirective(2, 42)), /^msg\.errors\[2\]: not an error/);
    assert.match(problem(errorDirective(2, true)), /^msg\.errors\[2\]: not an error/);
    assert.match(problem(errorDirective(2, ['x'])), /^msg\.errors\[2\]: not an error/);
  });
});

describe('batch outcomes: every item', () => {
  it('nothing said: every item gets the node action', () => {
    assert.deepEqual(batchDirectives(3, undefined, undefined), [{ from: 'node' }, { from: 'node' }, { from: 'node' }]);
  });

  it('an outcome before an error before the node action', () => {
    const directives = batchDirectives(4, { 1: 'park', 3: 'ack' }, ['e0', 'e1', null, 'e3']);
    assert.deepEqual(directives, [
      { from: 'error', error: 'e0' },
      { from: 'outcome', action: 'park', delayMs: 0 },
      { from: 'node' },
      { from: 'outcome', action: 'ack', delayMs: 0 },
    ]);
  });

  it('the first problem in either, whatever the other says', () => {
    assert.match(problem(batchDirectives(2, ['ack'], { 7: 'x' })), /^msg\.errors\[7\]: out of range/);
    assert.match(problem(batchDirectives(2, ['ack', 'bad'], ['x'])), /^msg\.outcomes\[1\]: 'bad' is not an outcome/);
  });
});
