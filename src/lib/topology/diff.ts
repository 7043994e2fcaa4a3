/**
 * How a queue or exchange on the broker differs from the plan: argument diffs, and the broker's 406
 * PRECONDITION_FAILED text read back into a sentence for the user. Pure.
 */
import { sameArgumentValue, SINGLE_ACTIVE_CONSUMER, type QueueArguments } from './arguments';

export { sameArgumentValue };

export interface ArgumentDifference {
  argument: string;
  /** Value on the broker; undefined when the broker has none. */
  broker: unknown;
  /** Value the configuration wants; undefined when it sets none. */
  config: unknown;
}

/** Arguments that differ between the broker's queue and the plan, sorted by name. */
export function diffArguments(broker: QueueArguments, config: QueueArguments): ArgumentDifference[] {
  const keys = [...new Set([...Object.keys(broker), ...Object.keys(config)])].sort();
  const out: ArgumentDifference[] = [];
  for (const argument of keys) {
    const b = broker[argument];
    const c = config[argument];
    if (b === undefined && c === undefined) continue;
    if (b !== undefined && c !== undefined && sameArgumentValue(b, c)) continue;
    // Classic is the default queue type: an explicit 'classic' on one side equals none on the other.
    if (argument === 'x-queue-type' && (b ?? 'classic') === 'classic' && (c ?? 'classic') === 'classic') continue;
    out.push({ argument, broker: b, config: c });
  }
  return out;
}

/** Arguments whose value names an exchange: there `''` is the default exchange. */
const EXCHANGE_VALUED: readonly string[] = ['x-dead-letter-exchange', 'alternate-exchange'];

/** Whether `value` of `argument` is the default exchange (`''` where an exchange is named): said in words, not as `''`. */
function isDefaultExchange(argument: string, value: unknown): boolean {
  return value === '' && EXCHANGE_VALUED.includes(argument);
}

/**
 * An argument's value for a person, in their language (the consumer's status line, the dialog's
 * *Check topology* table): `words.none` when unset, `words.defaultExchange` for `''` where an exchange
 * is named, a string quoted, anything else as JSON. Pure.
 */
export function argumentValueText(value: unknown, argument: string, words: { none: string; defaultExchange: string }): string {
  if (value === undefined) return words.none;
  if (isDefaultExchange(argument, value)) return words.defaultExchange;
  return typeof value === 'string' ? `'${value}'` : JSON.stringify(value);
}

/** The same in the messages' English, where a value that is not a number is quoted whatever it is. */
function show(value: unknown, argument: string): string {
  if (value === undefined) return 'none';
  if (typeof value === 'number') return String(value);
  if (isDefaultExchange(argument, value)) return "the default exchange ('')";
  return `'${typeof value === 'string' ? value : JSON.stringify(value)}'`;
}

/** A value as a 406's text gave it (`none`, the value, or undefined when cut off). */
function shownFromText(value: string | undefined, argument: string, missing: string): string {
  if (value === undefined) return missing;
  return value === 'none' ? 'none' : show(value, argument);
}

/**
 * What to do about a difference: an existing queue's arguments cannot be changed (docs/topology.md,
 * Mismatches, says how to get out). Exchanges: none (their type or arguments are said plainly).
 */
function argumentHint(kind: 'queue' | 'exchange', name: string, argument: string): string {
  if (kind !== 'queue') return '';
  if (argument === SINGLE_ACTIVE_CONSUMER) {
    return (
      ` (ordered mode declares the main queue with ${SINGLE_ACTIVE_CONSUMER}: true, so that one consumer of all Node-RED instances gets messages;` +
      ` an existing queue cannot be changed: move its messages elsewhere, delete '${name}' and redeploy, or use retry mode)`
    );
  }
  return ` (a queue's arguments cannot be changed: move its messages elsewhere, delete '${name}' and redeploy, or use another queue name; see "Mismatches" in the topology guide)`;
}

/** `queue 'main-queue': x-dead-letter-exchange is 'retry-exchange' on the broker, config says none (…how to get out)` */
export function describeDifference(kind: 'queue' | 'exchange', name: string, diff: ArgumentDifference): string {
  return `${kind} '${name}': ${differenceText(diff)}${argumentHint(kind, name, diff.argument)}`;
}

/** `x-message-ttl is 3000 on the broker, config says 5000` */
function differenceText(diff: ArgumentDifference): string {
  return `${diff.argument} is ${show(diff.broker, diff.argument)} on the broker, config says ${show(diff.config, diff.argument)}`;
}

/**
 * Every difference of one queue in one sentence, the way out said once:
 * `queue 'q': x-message-ttl is 3000 on the broker, config says 5000; x-max-length is none …, config says 10 (…)`.
 */
export function describeDifferences(kind: 'queue' | 'exchange', name: string, diffs: readonly ArgumentDifference[]): string {
  // Ordered mode's own advice when its argument is among them, else the general one.
  const first = diffs.find((d) => d.argument === SINGLE_ACTIVE_CONSUMER) ?? diffs[0];
  const hint = first ? argumentHint(kind, name, first.argument) : '';
  return `${kind} '${name}': ${diffs.map(differenceText).join('; ')}${hint}`;
}

export interface PreconditionFailure {
  kind: 'queue' | 'exchange';
  name: string;
  argument: string;
  /** What the declare sent ("none" when it sent no value). */
  received?: string;
  /** What the broker has. */
  current?: string;
}

const INEQUIVALENT =
  /inequivalent arg '([^']+)' for (queue|exchange) '([^']*)' in vhost '[^']*': received (none|'([^']*)'|the value '([^']*)'[^:]*?) but current is (none|'([^']*)'|the value '([^']*)')/;
const INEQUIVALENT_PREFIX = /inequivalent arg '([^']+)' for (queue|exchange) '([^']*)'/;

/**
 * Reads a broker's 406 PRECONDITION_FAILED text. The broker truncates long texts, so whatever part
 * survived is returned; null when even the argument name is gone. Decisions branch on the error's
 * `code`, never on this text: it only makes the message clearer.
 */
export function parsePreconditionFailure(text: string): PreconditionFailure | null {
  const full = INEQUIVALENT.exec(text);
  if (full) {
    const failure: PreconditionFailure = { kind: full[2] as 'queue' | 'exchange', name: full[3] ?? '', argument: full[1] ?? '' };
    const received = full[5] ?? full[6] ?? (full[4] === 'none' ? 'none' : undefined);
    const current = full[8] ?? full[9] ?? (full[7] === 'none' ? 'none' : undefined);
    if (received !== undefined) failure.received = received;
    if (current !== undefined) failure.current = current;
    return failure;
  }
  const prefix = INEQUIVALENT_PREFIX.exec(text);
  if (!prefix) return null;
  return { kind: prefix[2] as 'queue' | 'exchange', name: prefix[3] ?? '', argument: prefix[1] ?? '' };
}

/** A sentence about a 406 on declare, with the arguments when the broker's text still has them. */
export function describePreconditionFailure(failure: PreconditionFailure): string {
  const onBroker = shownFromText(failure.current, failure.argument, 'different');
  const inConfig = shownFromText(failure.received, failure.argument, 'something else');
  return `${failure.kind} '${failure.name}': ${failure.argument} is ${onBroker} on the broker, config says ${inConfig}${argumentHint(failure.kind, failure.name, failure.argument)}`;
}
