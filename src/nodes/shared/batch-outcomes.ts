/**
 * What the flow says about each item of a batch msg (docs/msg.md), read and checked before anything
 * is settled: `msg.outcomes` (the action per item: `'ack' | 'retry' | 'park'` or
 * `{action, reason?, error?, delay?}`) and `msg.errors` (the error per item, which the configuration's
 * error rules classify), each an array aligned with the items or an object keyed by index. An item
 * neither names gets the node's action. Pure: every index and value is checked, and the first that
 * cannot be used is the one error (naming its index), so a batch is settled all as asked or not at all.
 */
import type { SettleAction } from '../../lib/settle';

/** The actions an item's outcome may name. */
export const ITEM_ACTIONS: readonly SettleAction[] = ['ack', 'retry', 'park'];

/** What the flow said about one item. */
export type ItemDirective =
  /** `msg.outcomes` named it: settled as said, the error rules not asked. */
  | { from: 'outcome'; action: SettleAction; reason?: string; error?: unknown; delayMs: number }
  /** `msg.errors` named it: its error is classified (or, at a park-publisher, is its park reason). */
  | { from: 'error'; error: unknown }
  /** Neither: the node's action. */
  | { from: 'node' };

const NODE: ItemDirective = { from: 'node' };

/** A problem with the flow's per-item answers: the message names the property and the index. */
export class BatchInputError extends Error {}

/**
 * The entries of `msg.outcomes` or `msg.errors` by index (absent, null or undefined entries left out),
 * or the error naming the index that is not an item of a batch of `size`.
 */
export function entriesByIndex(name: string, value: unknown, size: number): Array<[number, unknown]> | BatchInputError {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object') return new BatchInputError(`msg.${name} must be an array aligned with msg.payload or an object keyed by item index, not ${typeof value}`);
  const keys = Array.isArray(value) ? [...value.keys()].map(String) : Object.keys(value);
  const entries: Array<[number, unknown]> = [];
  for (const key of keys) {
    const entry = (value as Record<string, unknown>)[key];
    if (entry === undefined || entry === null) continue;
    const index = /^(0|[1-9]\d*)$/.test(key) ? Number(key) : NaN;
    if (!Number.isSafeInteger(index)) return new BatchInputError(`msg.${name}[${JSON.stringify(key)}]: not an item index (an integer from 0 to ${size - 1})`);
    if (index >= size) return new BatchInputError(`msg.${name}[${index}]: out of range, the batch has ${size} item${size === 1 ? '' : 's'} (0 to ${size - 1})`);
    entries.push([index, entry]);
  }
  return entries;
}

/** A delay in ms (a number or a numeric string, 0 or more), or undefined when it is none. */
function delayOf(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.round(n) : undefined;
}

/** One `msg.outcomes` entry as a directive, or the error naming its index. */
export function outcomeDirective(index: number, entry: unknown): ItemDirective | BatchInputError {
  const at = `msg.outcomes[${index}]`;
  const allowed = ITEM_ACTIONS.map((a) => `'${a}'`).join(', ');
  if (typeof entry === 'string') {
    return (ITEM_ACTIONS as readonly string[]).includes(entry) ? { from: 'outcome', action: entry as SettleAction, delayMs: 0 } : new BatchInputError(`${at}: '${entry}' is not an outcome (${allowed} or {action, reason, error, delay})`);
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return new BatchInputError(`${at}: not an outcome (${allowed} or {action, reason, error, delay})`);
  const { action, reason, error, delay } = entry as Record<string, unknown>;
  if (typeof action !== 'string' || !(ITEM_ACTIONS as readonly string[]).includes(action)) return new BatchInputError(`${at}.action: ${JSON.stringify(action) ?? 'missing'} is not one of ${allowed}`);
  if (reason !== undefined && typeof reason !== 'string') return new BatchInputError(`${at}.reason: not a string`);
  const delayMs = delay === undefined ? 0 : delayOf(delay);
  if (delayMs === undefined) return new BatchInputError(`${at}.delay: not a number of ms (0 or more)`);
  return { from: 'outcome', action: action as SettleAction, reason, error, delayMs };
}

/** One `msg.errors` entry (a string or an Error-like object) as a directive, or the error naming its index. */
export function errorDirective(index: number, entry: unknown): ItemDirective | BatchInputError {
  if (typeof entry === 'string' || (typeof entry === 'object' && entry !== null && !Array.isArray(entry))) return { from: 'error', error: entry };
  return new BatchInputError(`msg.errors[${index}]: not an error (a string or an object such as {message, name, code})`);
}

/** Puts each entry of `value` (msg.outcomes or msg.errors) as its directive at its index; the first problem, if any. */
function place(directives: ItemDirective[], name: string, value: unknown, read: (index: number, entry: unknown) => ItemDirective | BatchInputError): BatchInputError | undefined {
  const entries = entriesByIndex(name, value, directives.length);
  if (entries instanceof BatchInputError) return entries;
  for (const [index, entry] of entries) {
    const directive = read(index, entry);
    if (directive instanceof BatchInputError) return directive;
    directives[index] = directive;
  }
  return undefined;
}

/**
 * The directive of each of a batch's `size` items: its `msg.outcomes` entry, else its `msg.errors`
 * entry, else the node's action; or the first problem found (nothing is settled then).
 */
export function batchDirectives(size: number, outcomes: unknown, errors: unknown): ItemDirective[] | BatchInputError {
  const directives: ItemDirective[] = new Array<ItemDirective>(size).fill(NODE);
  // msg.errors first, so an outcome named for the same item takes its place.
  return place(directives, 'errors', errors, errorDirective) ?? place(directives, 'outcomes', outcomes, outcomeDirective) ?? directives;
}
