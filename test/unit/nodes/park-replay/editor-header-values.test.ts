import assert from 'node:assert/strict';
import { bodyProblem, editableBody, headerInput, headerValue, lockedBy } from '../../../../src/nodes/park-replay/editor-header-values';

describe('the edit dialog’s header values and body (parking browser)', () => {
  it('shows a header value with its type, and reads it back the same', () => {
    const values: unknown[] = ['c-1', '', 42, 1.5, true, false, null, { a: [1, 'x'] }, [1, 2]];
    for (const value of values) {
      const shown = headerInput(value);
      assert.deepEqual(headerValue('h', shown.type, shown.text), value, JSON.stringify(value));
    }
    assert.deepEqual(headerInput(7), { type: 'num', text: '7' });
    assert.deepEqual(headerInput({ a: 1 }), { type: 'json', text: '{"a":1}' });
    assert.equal(headerValue('h', 'str', ' 12 '), ' 12 ');
  });

  it('says which header is wrong: not a number, not JSON', () => {
    assert.throws(() => headerValue('amount', 'num', 'ten'), /header 'amount': 'ten' is not a number/);
    assert.throws(() => headerValue('amount', 'num', ''), /is not a number/);
    assert.throws(() => headerValue('meta', 'json', '{a:1}'), /header 'meta': not JSON/);
  });

  it('shows as locked what the endpoint locks, by name or prefix, whatever the case', () => {
    const locked = { names: ['traceparent', 'replay-of'], prefixes: ['retry-', 'x-'] };
    assert.equal(lockedBy(locked, 'Traceparent'), true);
    assert.equal(lockedBy(locked, 'x-death'), true);
    assert.equal(lockedBy(locked, 'retry-attempt'), true);
    assert.equal(lockedBy(locked, 'customer'), false);
  });

  it('pretty-prints a JSON body to edit, and keeps a JSON message JSON', () => {
    assert.equal(editableBody('{"a":1}'), '{\n  "a": 1\n}');
    assert.equal(editableBody('plain text'), 'plain text');
    assert.equal(bodyProblem('{"a":1}', 'application/json'), undefined);
    assert.equal(bodyProblem('nope', 'text/plain'), undefined);
    assert.equal(bodyProblem('nope', null), undefined);
    assert.match(bodyProblem('{"a":', 'application/json') ?? '', /JSON/);
  });
});
