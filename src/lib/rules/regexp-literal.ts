/**
 * A user's `/source/flags`, read in one place for every property that takes "a text or a regular
 * expression". Pure and browser-safe (the editor bundles it with the rules that use it).
 */

/**
 * Which flags make a `/…/flags` text a literal: `known` — only the letters JavaScript knows
 * (`dgimsuvy`), anything else leaves the whole text a plain pattern; `letters` — any lowercase letters,
 * so an unknown flag is an error the user sees.
 */
export type FlagGrammar = 'known' | 'letters';

const LITERALS: Record<FlagGrammar, RegExp> = { known: /^\/(.+)\/([dgimsuvy]*)$/s, letters: /^\/(.+)\/([a-z]*)$/s };

/**
 * The regular expression `value` writes as `/source/flags`, or undefined when it is not written so.
 * A global or sticky flag is dropped: it makes `test()` remember where it stopped, not what a rule
 * means. Throws (a SyntaxError) when the literal does not compile.
 */
export function regExpLiteral(value: string, flags: FlagGrammar): RegExp | undefined {
  const literal = LITERALS[flags].exec(value);
  return literal ? new RegExp(literal[1] ?? '', (literal[2] ?? '').replace(/[gy]/g, '')) : undefined;
}
