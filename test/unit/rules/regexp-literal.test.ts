/** The one reader of a user's `/source/flags`, and its two callers' grammars kept apart. */
import assert from 'node:assert/strict';
import { ruleRegExp } from '../../../src/lib/classify/rules';
import { reasonExpression, regExpLiteral } from '../../../src/lib/rules';

const shown = (re: RegExp | undefined): string | undefined => re && `${re.source} ${re.flags}`;

describe('regExpLiteral', () => {
  for (const grammar of ['known', 'letters'] as const) {
    describe(`with ${grammar} flags`, () => {
      it('reads the source and the flags of a literal', () => {
        assert.equal(shown(regExpLiteral('/ab+c/i', grammar)), 'ab+c i');
        assert.equal(shown(regExpLiteral('/ab+c/', grammar)), 'ab+c ');
        assert.equal(shown(regExpLiteral('/a/ms', grammar)), 'a ms');
      });
      it('keeps slashes inside the source: the last one ends it', () => {
        assert.equal(shown(regExpLiteral('/a/b/m', grammar)), 'a\\/b m');
      });
      it('reads a source over several lines', () => {
        assert.equal(regExpLiteral('/a\nb/', grammar)?.test('a\nb'), true);
      });
      it('drops the global and sticky flags, which make test() remember where it stopped', () => {
        assert.equal(shown(regExpLiteral('/a/gimy', grammar)), 'a im');
        assert.equal(shown(regExpLiteral('/a/gg', grammar)), 'a ');
      });
      it('is not a literal: plain text, an empty source, a space around it, an uppercase flag', () => {
        for (const value of ['timeout', '//', '//i', ' /a/i', '/a/i ', '/a/I', 'a/b/']) assert.equal(regExpLiteral(value, grammar), undefined, value);
      });
      it('throws when the literal does not compile', () => {
        assert.throws(() => regExpLiteral('/(/', grammar), SyntaxError);
        assert.throws(() => regExpLiteral('/a/ii', grammar), SyntaxError);
      });
    });
  }

  it('known: a flag JavaScript does not know leaves the text no literal', () => {
    assert.equal(regExpLiteral('/a/x', 'known'), undefined);
    assert.equal(regExpLiteral('/a/iq', 'known'), undefined);
  });

  it('letters: a flag JavaScript does not know is an error', () => {
    assert.throws(() => regExpLiteral('/a/x', 'letters'), SyntaxError);
    assert.throws(() => regExpLiteral('/a/iq', 'letters'), SyntaxError);
  });
});

describe('the callers of regExpLiteral keep their grammars', () => {
  it('an error rule: `/a/x` is the pattern itself, an untrimmed text is a pattern too', () => {
    assert.equal(shown(ruleRegExp('/timeout/i')), 'timeout i');
    assert.equal(ruleRegExp('/a/x').test('see /a/x here'), true);
    assert.equal(shown(ruleRegExp(' /a/i')), ' \\/a\\/i ');
    assert.equal(shown(ruleRegExp('ECONN(RESET|REFUSED)')), 'ECONN(RESET|REFUSED) ');
    assert.throws(() => ruleRegExp('('), SyntaxError);
  });

  it('a reason filter: trimmed, `/a/x` is an invalid expression, plain text is a part of the reason', () => {
    assert.equal(shown(reasonExpression('  /timeout/gi  ') as RegExp), 'timeout i');
    assert.equal((reasonExpression('/a/x') as { code: string }).code, 'regex');
    assert.equal((reasonExpression('/(/') as { code: string }).code, 'regex');
    assert.equal(reasonExpression('timeout'), undefined);
  });
});
