/** Error rules (lib/classify): their syntax and problems, and classifying a failure case by case. */
import assert from 'node:assert/strict';
import { classifyFailure, ErrorClassifier, permanentReason, type Classification, type ClassifyInput } from '../../../src/lib/classify/match';
import { HTTP_STARTING_RULES, type ErrorRule } from '../../../src/lib/classify/rules';

const rule = (match: ErrorRule['match'], value: string, kind: ErrorRule['kind'] = 'permanent', name = `${match} ${value}`): ErrorRule => ({ name, match, value, kind });

/** Classifies synchronously (no JSONata rule): a promise here is a failure of the test. */
function sync(rules: ErrorRule[], input: ClassifyInput): Classification {
  const result = classifyFailure(rules, input);
  assert.ok(!(result instanceof Promise), 'classified synchronously');
  return result;
}

describe('error rules: classifying a failure', () => {
  it('no rules, or no rule matching: transient, without a rule', () => {
    assert.deepEqual(sync([], { error: new Error('x'), statusCode: 400 }), { kind: 'transient' });
    assert.deepEqual(sync([rule('status', '404')], { statusCode: 400 }), { kind: 'transient' });
  });

  it('status: a number or a numeric string, never a code; nothing without one', () => {
    const rules = [rule('status', '4xx', 'permanent', 'client')];
    assert.deepEqual(sync(rules, { statusCode: 400 }), { kind: 'permanent', rule: 'client' });
    assert.deepEqual(sync(rules, { statusCode: '404' }), { kind: 'permanent', rule: 'client' });
    assert.deepEqual(sync(rules, { statusCode: 'ECONNREFUSED' }), { kind: 'transient' });
    assert.deepEqual(sync(rules, {}), { kind: 'transient' });
  });

  it('the HTTP starting set: 408 and 429 transient, other 4xx permanent, 5xx and connection errors transient', () => {
    const kind = (input: ClassifyInput): string => sync([...HTTP_STARTING_RULES], input).kind;
    assert.equal(kind({ statusCode: 400 }), 'permanent');
    assert.equal(kind({ statusCode: 404 }), 'permanent');
    assert.equal(kind({ statusCode: 408 }), 'transient');
    assert.equal(kind({ statusCode: 429 }), 'transient');
    assert.equal(kind({ statusCode: 503 }), 'transient');
    assert.equal(sync([...HTTP_STARTING_RULES], { statusCode: 429 }).rule, 'HTTP timeout or throttled');
    // The http request node puts a request error's code in msg.statusCode; a Catch node copies it to msg.error.code.
    assert.deepEqual(sync([...HTTP_STARTING_RULES], { statusCode: 'ECONNREFUSED' }), { kind: 'transient', rule: 'connection refused' });
    assert.deepEqual(sync([...HTTP_STARTING_RULES], { error: { message: 'RequestError: read ECONNRESET', code: 'ECONNRESET' } }), { kind: 'transient', rule: 'connection reset' });
  });

  it('code: msg.error.code (a string, or a number as text)', () => {
    const rules = [rule('code', '23505', 'done', 'unique key')];
    assert.deepEqual(sync(rules, { error: Object.assign(new Error('duplicate key value'), { code: '23505' }) }), { kind: 'done', rule: 'unique key' });
    assert.deepEqual(sync([rule('code', '42')], { error: { message: 'm', code: 42 } }).kind, 'permanent');
    assert.deepEqual(sync(rules, { error: 'duplicate key value' }), { kind: 'transient' });
    assert.deepEqual(sync(rules, { error: { message: 'x', code: '23503' } }), { kind: 'transient' });
  });

  it("name: an Error's name, a Catch node's message (TypeError: …), a string that starts with one", () => {
    const rules = [rule('name', 'ValidationError', 'permanent', 'invalid')];
    class ValidationError extends Error {
      override name = 'ValidationError';
    }
    assert.equal(sync(rules, { error: new ValidationError('amount missing') }).kind, 'permanent');
    assert.equal(sync(rules, { error: { message: 'ValidationError: amount missing', source: { id: 'f1' } } }).kind, 'permanent');
    assert.equal(sync(rules, { error: 'ValidationError: amount missing' }).kind, 'permanent');
    assert.equal(sync(rules, { error: new TypeError('x') }).kind, 'transient');
    assert.equal(sync([rule('name', 'TypeError')], { error: { message: 'TypeError: x is undefined' } }).kind, 'permanent');
    assert.equal(sync(rules, {}).kind, 'transient');
  });

  it('message: a regular expression on the message text, or /…/flags', () => {
    assert.equal(sync([rule('message', 'card (declined|expired)')], { error: new Error('card declined by issuer') }).kind, 'permanent');
    assert.equal(sync([rule('message', 'card declined')], { error: 'Card Declined' }).kind, 'transient');
    assert.equal(sync([rule('message', '/card declined/i')], { error: 'Card Declined' }).kind, 'permanent');
    // A global flag would keep its position between tests: it is dropped, the rule matches every time.
    const rules = [rule('message', '/declined/g')];
    assert.equal(sync(rules, { error: 'declined' }).kind, 'permanent');
    const classifier = new ErrorClassifier(rules);
    assert.equal((classifier.classify({ error: 'declined' }) as Classification).kind, 'permanent');
    assert.equal((classifier.classify({ error: 'declined' }) as Classification).kind, 'permanent');
    assert.equal(sync([rule('message', '^$')], { error: { message: 42 } }).kind, 'permanent', 'no message text is the empty text');
  });

  it('first match wins, in order', () => {
    const rules = [rule('status', '408,429', 'transient', 'slow'), rule('status', '4xx', 'permanent', 'client'), rule('status', '409', 'done', 'never reached')];
    assert.deepEqual(sync(rules, { statusCode: 429 }), { kind: 'transient', rule: 'slow' });
    assert.deepEqual(sync(rules, { statusCode: 409 }), { kind: 'permanent', rule: 'client' });
  });

  it('jsonata: through the injected compiler; a promise only once the walk reaches it', async () => {
    const seen: unknown[] = [];
    const compiler = (expression: string) => {
      if (expression === 'bad(') throw new Error('unexpected end');
      return (input: ClassifyInput) => {
        seen.push(input.msg);
        return Promise.resolve(expression === 'yes');
      };
    };
    const rules = [rule('status', '400', 'permanent', 'bad request'), rule('jsonata', 'no', 'done', 'j1'), rule('jsonata', 'yes', 'done', 'j2')];
    const classifier = new ErrorClassifier(rules, compiler);
    assert.equal(classifier.size, 3);
    assert.deepEqual(classifier.classify({ statusCode: 400, msg: 1 }), { kind: 'permanent', rule: 'bad request' });
    assert.deepEqual(seen, [], 'a match before the JSONata rules does not evaluate them');
    const later = classifier.classify({ statusCode: 500, msg: 2 });
    assert.ok(later instanceof Promise);
    assert.deepEqual(await later, { kind: 'done', rule: 'j2' });
    assert.deepEqual(seen, [2, 2]);
    assert.deepEqual(await new ErrorClassifier([rule('jsonata', 'no')], compiler).classify({}), { kind: 'transient' });
    assert.throws(() => new ErrorClassifier([rule('code', 'E'), rule('jsonata', 'bad(', 'done', 'expr')], compiler), /error rule 2 'expr': the expression does not parse: unexpected end/);
    assert.throws(() => new ErrorClassifier([rule('jsonata', 'yes', 'done', 'expr')]), /error rule 1 'expr': JSONata is not available here/);
    // A synchronous answer stays synchronous.
    assert.deepEqual(new ErrorClassifier([rule('jsonata', 'x', 'done', 's')], () => () => true).classify({}), { kind: 'done', rule: 's' });
  });

  it('the park reason of a permanent failure names its rule', () => {
    assert.equal(permanentReason('HTTP client error', 'HTTP 400'), 'permanent (HTTP client error): HTTP 400');
    assert.equal(permanentReason('x', ''), 'permanent (x)');
  });
});
