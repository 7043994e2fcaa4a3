/**
 * Error rules as data: what a rule is, the syntax of a status list, and what is wrong with a list of
 * rules (one implementation for the runtime, which refuses it at deploy, and the editor's dialog,
 * which bundles this file). Pure and browser-safe: no Node.js module; it imports only the pure rules
 * floor (how a `/…/flags` literal is read).
 */
import { regExpLiteral } from '../rules';

/**
 * What a failure is: `transient` may heal (retried, as without rules), `permanent` cannot (parked at
 * once, no attempt spent), `done` means the effect already happened (acked).
 */
export type ErrorKind = 'transient' | 'permanent' | 'done';
export const ERROR_KINDS: readonly ErrorKind[] = ['transient', 'permanent', 'done'];

/** What part of a failed msg a rule looks at. */
export type RuleMatch = 'name' | 'code' | 'message' | 'status' | 'jsonata';
export const RULE_MATCHES: readonly RuleMatch[] = ['name', 'code', 'message', 'status', 'jsonata'];

/** One rule of a retry configuration's ordered list (`errorRules`, plain data in the flows JSON). */
export interface ErrorRule {
  /** Shown in the park reason: `permanent (<name>): <error>`. */
  name: string;
  match: RuleMatch;
  /** The error name or code, a regular expression, a status list (`400,4xx`), or a JSONata expression. */
  value: string;
  kind: ErrorKind;
}

/** A status list: whole codes (`400`) and classes (`4xx` = 400–499). */
export interface StatusSpec {
  codes: readonly number[];
  /** The hundreds of the classes (`4` for `4xx`). */
  classes: readonly number[];
}

/** Reads `400`, `4xx` or a comma list of those; throws saying what is wrong. */
export function parseStatusSpec(value: string): StatusSpec {
  const codes: number[] = [];
  const classes: number[] = [];
  const parts = value.split(',').map((part) => part.trim());
  if (parts.every((part) => part === '')) throw new Error('no status code: write one like 400, a class like 4xx, or a comma list');
  for (const part of parts) {
    if (part === '') continue;
    const cls = /^([1-5])xx$/i.exec(part);
    if (cls) classes.push(Number(cls[1]));
    else if (/^[1-5]\d\d$/.test(part)) codes.push(Number(part));
    else throw new Error(`'${part}' is not a status code (100–599) or a class (1xx–5xx)`);
  }
  return { codes, classes };
}

/** Whether an HTTP status is in a status list. */
export function statusMatches(spec: StatusSpec, status: number): boolean {
  return spec.codes.includes(status) || spec.classes.includes(Math.floor(status / 100));
}

/** A message rule's regular expression: its source, or `/source/flags`. Throws when it does not compile. */
export function ruleRegExp(value: string): RegExp {
  // Only the flags JavaScript knows make a literal: `/a/x` is the pattern `/a/x` itself. Not trimmed.
  return regExpLiteral(value, 'known') ?? new RegExp(value);
}

/** The starting set the dialog offers for HTTP calls (the http request node), in order: first match wins. */
export const HTTP_STARTING_RULES: readonly ErrorRule[] = [
  { name: 'HTTP timeout or throttled', match: 'status', value: '408,429', kind: 'transient' },
  { name: 'HTTP client error', match: 'status', value: '4xx', kind: 'permanent' },
  { name: 'HTTP server error', match: 'status', value: '5xx', kind: 'transient' },
  { name: 'connection refused', match: 'code', value: 'ECONNREFUSED', kind: 'transient' },
  { name: 'timed out', match: 'code', value: 'ETIMEDOUT', kind: 'transient' },
  { name: 'connection reset', match: 'code', value: 'ECONNRESET', kind: 'transient' },
];

/** How a problem names its rule: by position (from 1) and name. */
export function ruleLabel(index: number, name: unknown): string {
  return typeof name === 'string' && name.trim() !== '' ? `error rule ${index + 1} '${name.trim()}'` : `error rule ${index + 1}`;
}

/** What is wrong with one rule (undefined when nothing): the text without the rule's label. */
export function ruleProblem(rule: unknown): string | undefined {
  if (rule === null || typeof rule !== 'object' || Array.isArray(rule)) return 'is not an object with name, match, value and kind';
  const r = rule as Record<string, unknown>;
  if (typeof r.name !== 'string' || r.name.trim() === '') return 'has no name';
  if (!RULE_MATCHES.includes(r.match as RuleMatch)) return `matches ${JSON.stringify(r.match)}: use one of ${RULE_MATCHES.join(', ')}`;
  if (!ERROR_KINDS.includes(r.kind as ErrorKind)) return `has kind ${JSON.stringify(r.kind)}: use one of ${ERROR_KINDS.join(', ')}`;
  const what: Record<RuleMatch, string> = { name: 'error name', code: 'error code', message: 'regular expression', status: 'status code', jsonata: 'expression' };
  if (typeof r.value !== 'string' || r.value.trim() === '') return `has no ${what[r.match as RuleMatch]} to match`;
  try {
    if (r.match === 'message') ruleRegExp(r.value);
    if (r.match === 'status') parseStatusSpec(r.value);
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
}

/** Every problem of an `errorRules` property, as sentences naming the rule (empty when valid; absent means no rules). */
export function errorRuleProblems(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return ['error rules must be a list of rules'];
  const problems: string[] = [];
  value.forEach((rule: unknown, index) => {
    const problem = ruleProblem(rule);
    if (problem !== undefined) problems.push(`${ruleLabel(index, (rule as { name?: unknown } | null)?.name)} ${problem}`);
  });
  return problems;
}

/** The rules of an `errorRules` property, trimmed; throws with every problem found. */
export function readErrorRules(value: unknown): ErrorRule[] {
  const problems = errorRuleProblems(value);
  if (problems.length > 0) throw new Error(problems.join('; '));
  return ((value ?? []) as ErrorRule[]).map((r) => ({ name: r.name.trim(), match: r.match, value: r.value.trim(), kind: r.kind }));
}
