/** Error rules (lib/classify): their syntax and problems, and classifying a failure case by case. */
import assert from 'node:assert/strict';
import { errorRuleProblems, HTTP_STARTING_RULES, parseStatusSpec, readErrorRules, statusMatches, type ErrorRule } from '../../../src/lib/classify/rules';

const rule = (match: ErrorRule['match'], value: string, kind: ErrorRule['kind'] = 'permanent', name = `${match} ${value}`): ErrorRule => ({ name, match, value, kind });

describe('error rules: status lists', () => {
  it('reads a code, a class and a comma list', () => {
    assert.deepEqual(parseStatusSpec('400'), { codes: [400], classes: [] });
    assert.deepEqual(parseStatusSpec('4xx'), { codes: [], classes: [4] });
    assert.deepEqual(parseStatusSpec(' 400, 404 ,5XX'), { codes: [400, 404], classes: [5] });
  });

  it('refuses what is not a status, saying which part', () => {
    assert.throws(() => parseStatusSpec(''), /no status code/);
    assert.throws(() => parseStatusSpec(' , '), /no status code/);
    assert.throws(() => parseStatusSpec('400,abc'), /'abc' is not a status code/);
    assert.throws(() => parseStatusSpec('600'), /'600' is not a status code/);
    assert.throws(() => parseStatusSpec('4x'), /'4x' is not/);
    assert.throws(() => parseStatusSpec('40'), /'40' is not/);
  });

  it('matches codes and classes', () => {
    const spec = parseStatusSpec('408,5xx');
    assert.equal(statusMatches(spec, 408), true);
    assert.equal(statusMatches(spec, 503), true);
    assert.equal(statusMatches(spec, 400), false);
    assert.equal(statusMatches(spec, 200), false);
  });
});

describe('error rules: problems', () => {
  it('accepts no rules, an empty list and the HTTP starting set', () => {
    assert.deepEqual(errorRuleProblems(undefined), []);
    assert.deepEqual(errorRuleProblems([]), []);
    assert.deepEqual(errorRuleProblems(HTTP_STARTING_RULES), []);
  });

  it('names the rule by position and name, and what is wrong', () => {
    assert.deepEqual(errorRuleProblems('[]'), ['error rules must be a list of rules']);
    assert.deepEqual(errorRuleProblems([null]), ['error rule 1 is not an object with name, match, value and kind']);
    assert.deepEqual(errorRuleProblems([{ name: ' ', match: 'code', value: 'E', kind: 'transient' }]), ['error rule 1 has no name']);
    assert.deepEqual(errorRuleProblems([rule('code', 'E'), { name: 'x', match: 'header', value: 'E', kind: 'transient' }]), ["error rule 2 'x' matches \"header\": use one of name, code, message, status, jsonata"]);
    assert.deepEqual(errorRuleProblems([{ name: 'x', match: 'code', value: 'E', kind: 'fatal' }]), ["error rule 1 'x' has kind \"fatal\": use one of transient, permanent, done"]);
    assert.deepEqual(errorRuleProblems([rule('code', '', 'done', 'dup')]), ["error rule 1 'dup' has no error code to match"]);
    assert.deepEqual(errorRuleProblems([rule('jsonata', ' ', 'done', 'expr')]), ["error rule 1 'expr' has no expression to match"]);
    assert.deepEqual(errorRuleProblems([rule('message', '(unclosed', 'permanent', 'bad re')]), ["error rule 1 'bad re' Invalid regular expression: /(unclosed/: Unterminated group"]);
    assert.deepEqual(errorRuleProblems([rule('status', '4xx, 99', 'permanent', 'http')]), ["error rule 1 'http' '99' is not a status code (100–599) or a class (1xx–5xx)"]);
  });

  it('reads valid rules trimmed, and throws every problem at once', () => {
    assert.deepEqual(readErrorRules([{ name: ' a ', match: 'code', value: ' E1 ', kind: 'done' }]), [{ name: 'a', match: 'code', value: 'E1', kind: 'done' }]);
    assert.deepEqual(readErrorRules(undefined), []);
    assert.throws(() => readErrorRules([rule('status', 'x'), rule('message', '[')]), /error rule 1 'status x' 'x' is not a status code.*; error rule 2 'message \[' Invalid regular expression/);
  });
});
