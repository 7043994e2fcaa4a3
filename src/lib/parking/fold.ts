/**
 * Park reasons folded into group keys: the variable parts of a reason (numbers, amounts, ids, quoted
 * values, UUIDs, timestamps, e-mail addresses) become placeholders, so `amount 1200 is over the 1000
 * limit` and `amount 99.5 is over the 50 limit` are one group, `amount {n} is over the {n} limit`.
 * Pure.
 */
import { reasonExpression } from '../rules';

/** A group's key when a parked message says nothing about why (no park reason, no dead-letter reason). */
export const NO_REASON_KEY = '{none}';

/** Folded keys longer than this are cut: a group key is a label, not the whole message. */
const MAX_KEY = 300;

/**
 * The replacements, in order: the more specific shapes first, so a timestamp is not read as numbers
 * and a UUID not as a hex id. Each pattern is global and its placeholder has none of the characters
 * a later pattern matches.
 */
const FOLDS: Array<[RegExp, string]> = [
  // Quoted values: '…', "…", `…` (not across lines). A quote is a value, whatever it holds.
  [/'[^'\n]*'|"[^"\n]*"|`[^`\n]*`/g, '{s}'],
  // ISO 8601 timestamps, with or without time, fraction and zone.
  [/\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/g, '{time}'],
  // Times of day.
  [/\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b/g, '{time}'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '{uuid}'],
  [/\b[\w.%+-]+@[\w-]+(?:\.[\w-]+)+\b/g, '{email}'],
  // Hex ids: 0x…, or 8+ hex digits with at least one digit and one letter (a word of letters only is a word).
  [/\b0x[0-9a-f]+\b/gi, '{id}'],
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, '{id}'],
  // Words starting with a letter and holding digits (A17, order_12, v2): ids.
  [/\b[a-z_]\w*\d\w*\b/gi, '{id}'],
  // Amounts with a currency sign before or after, then plain numbers (signed, grouped, decimal, percent).
  [/[$€£¥₽₴]\s?-?\d+(?:[.,]\d+)*/g, '{n}'],
  [/(?<!\w)-?\d+(?:[.,]\d+)*(?:\s?[$€£¥₽₴%])?/g, '{n}'],
];

/**
 * The group key of a park reason: its variable parts replaced by `{n}`, `{s}`, `{time}`, `{uuid}`,
 * `{id}`, `{email}`, whitespace collapsed. A missing reason is NO_REASON_KEY.
 */
export function foldReason(reason: string | null | undefined): string {
  if (reason === null || reason === undefined) return NO_REASON_KEY;
  let key = reason;
  for (const [pattern, placeholder] of FOLDS) key = key.replace(pattern, placeholder);
  // Numbers written with spaces (1 000) or side by side are one variable part.
  key = key.replace(/\s+/g, ' ').trim().replace(/\{n\}(?: \{n\})+/g, '{n}');
  return key.length > MAX_KEY ? `${key.slice(0, MAX_KEY - 1)}…` : key;
}

/**
 * What a `reason` selection matches: written `/…/flags` a regular expression, else a case-insensitive
 * part of the reason. Throws on an invalid expression (a typo must not select everything, nor nothing silently).
 */
export function reasonMatcher(reason: string): (text: string) => boolean {
  const read = reasonExpression(reason);
  if (read instanceof RegExp) return (text) => read.test(text);
  if (read !== undefined) throw new Error(`reason ${reason} is not a valid regular expression: ${read.text}`);
  const part = reason.toLowerCase();
  return (text) => text.toLowerCase().includes(part);
}
