/**
 * Classifying a failure by a retry configuration's error rules: the first rule that matches what the
 * failed msg carries names its kind; none matching means transient (retried, as without rules).
 * Compiled once (regular expressions, status lists, JSONata through an injected evaluator); a rule
 * list without JSONata classifies synchronously, one with it returns a promise only when the walk
 * reaches a JSONata rule.
 */
import { errorMessage, errorName } from '../message';
import { retryAfterOf } from './retry-after';
import { parseStatusSpec, readErrorRules, ruleLabel, ruleRegExp, statusMatches, type ErrorKind, type ErrorRule } from './rules';

/** What a failed msg carries: `msg.error` (an Error, a Catch node's error object, a string), `msg.statusCode`, the msg. */
export interface ClassifyInput {
  error?: unknown;
  statusCode?: unknown;
  msg?: unknown;
  /** ms since epoch, for a `Retry-After` date; the clock when absent. */
  now?: number;
}

export interface Classification {
  kind: ErrorKind;
  /** The rule that matched; none: no rule did (transient). */
  rule?: string;
  /** A transient HTTP status rule matched and the response said `Retry-After`: the wait it asks for, in ms. */
  delayMs?: number;
}

/** A JSONata rule's test, made by the caller (Node-RED evaluates JSONata asynchronously): true-ish matches. */
export type RulePredicate = (input: ClassifyInput) => unknown;
/** Compiles a JSONata rule's expression (throws when it does not parse). */
export type JsonataCompiler = (expression: string) => RulePredicate;

interface CompiledRule {
  rule: ErrorRule;
  test: (input: ClassifyInput) => unknown;
}

const NO_MATCH: Classification = { kind: 'transient' };

/** `msg.statusCode` as a number (the http request node sets a number; a numeric string counts too). */
function statusOf(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d{3}$/.test(value.trim()) ? Number(value) : NaN;
  return Number.isInteger(n) ? n : undefined;
}

/**
 * The error's code: `msg.error.code` (a Catch node copies it from the Error), else a `msg.statusCode`
 * that is not a number — the http request node puts the request error's code there (`ECONNREFUSED`).
 */
function codeOf(input: ClassifyInput): string | undefined {
  const error = input.error;
  const code = error !== null && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  return typeof input.statusCode === 'string' && statusOf(input.statusCode) === undefined ? input.statusCode : undefined;
}

function compile(rule: ErrorRule, index: number, jsonata: JsonataCompiler | undefined): CompiledRule {
  const { value } = rule;
  switch (rule.match) {
    case 'name':
      return { rule, test: (input) => errorName(input.error) === value };
    case 'code':
      return { rule, test: (input) => codeOf(input) === value };
    case 'message': {
      const re = ruleRegExp(value);
      return { rule, test: (input) => re.test(errorMessage(input.error) ?? '') };
    }
    case 'status': {
      const spec = parseStatusSpec(value);
      return {
        rule,
        test: (input) => {
          const status = statusOf(input.statusCode);
          return status !== undefined && statusMatches(spec, status);
        },
      };
    }
    case 'jsonata': {
      if (!jsonata) throw new Error(`${ruleLabel(index, rule.name)}: JSONata is not available here`);
      try {
        return { rule, test: jsonata(value) };
      } catch (err) {
        throw new Error(`${ruleLabel(index, rule.name)}: the expression does not parse: ${(err as Error).message}`, { cause: err });
      }
    }
  }
}

function isPromise(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}

/** A retry configuration's rules, compiled: `classify` walks them in order. */
export class ErrorClassifier {
  private readonly compiled: CompiledRule[];

  /** Throws with every problem of the rules (or the first JSONata expression that does not parse). */
  constructor(rules: unknown, jsonata?: JsonataCompiler) {
    this.compiled = readErrorRules(rules).map((rule, index) => compile(rule, index, jsonata));
  }

  /** How many rules there are (none: every failure is transient, nothing to classify). */
  get size(): number {
    return this.compiled.length;
  }

  /** The first rule that matches names the kind; none: transient. A promise only once a JSONata rule answers by one. */
  classify(input: ClassifyInput): Classification | Promise<Classification> {
    return this.walk(input, 0);
  }

  private walk(input: ClassifyInput, from: number): Classification | Promise<Classification> {
    const { compiled } = this;
    for (let i = from; i < compiled.length; i++) {
      const { rule, test } = compiled[i] as CompiledRule;
      const matched = test(input);
      if (isPromise(matched)) {
        return Promise.resolve(matched).then((value) => (value ? matchedBy(rule, input) : this.walk(input, i + 1)));
      }
      if (matched) return matchedBy(rule, input);
    }
    return NO_MATCH;
  }
}

/**
 * What a matching rule makes of the failure. A transient status rule honours the response's
 * `Retry-After` (seconds or an HTTP date): the retry waits at least that long.
 */
function matchedBy(rule: ErrorRule, input: ClassifyInput): Classification {
  if (rule.kind !== 'transient' || rule.match !== 'status') return { kind: rule.kind, rule: rule.name };
  const delayMs = retryAfterOf(input.msg, input.now ?? Date.now());
  return delayMs === undefined ? { kind: rule.kind, rule: rule.name } : { kind: rule.kind, rule: rule.name, delayMs };
}

/** Classifies one failure by a list of rules (compiles them each time: a node keeps an {@link ErrorClassifier}). */
export function classifyFailure(rules: readonly ErrorRule[], input: ClassifyInput, jsonata?: JsonataCompiler): Classification | Promise<Classification> {
  return new ErrorClassifier(rules, jsonata).classify(input);
}

/** The park reason of a permanent failure: `permanent (<rule name>): <error text>`. */
export function permanentReason(rule: string | undefined, error: string): string {
  return `permanent (${rule ?? 'error rules'})${error ? `: ${error}` : ''}`;
}
