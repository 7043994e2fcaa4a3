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

function show(value: unknown): string {
  if (value === undefined) return 'none';
  if (typeof value === 'number') return String(value);
  return `'${typeof value === 'string' ? value : JSON.stringify(value)}'`;
}

/** What to do about a difference in an argument an existing queue cannot change. */
function argumentHint(kind: 'queue' | 'exchange', name: string, argument: string): string {
  if (kind !== 'queue' || argument !== SINGLE_ACTIVE_CONSUMER) return '';
  return (
    ` (ordered mode declares the main queue with ${SINGLE_ACTIVE_CONSUMER}: true, so that one consumer of all Node-RED instances gets messages;` +
    ` an existing queue cannot be changed: move its messages elsewhere, delete '${name}' and redeploy, or use retry mode)`
  );
}

/** `queue 'main-queue': x-dead-letter-exchange is 'retry-exchange' on the broker, config says none` */
export function describeDifference(kind: 'queue' | 'exchange', name: string, diff: ArgumentDifference): string {
  return `${kind} '${name}': ${diff.argument} is ${show(diff.broker)} on the broker, config says ${show(diff.config)}${argumentHint(kind, name, diff.argument)}`;
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
  const onBroker = failure.current === undefined ? 'different' : failure.current === 'none' ? 'none' : `'${failure.current}'`;
  const inConfig = failure.received === undefined ? 'something else' : failure.received === 'none' ? 'none' : `'${failure.received}'`;
  return `${failure.kind} '${failure.name}': ${failure.argument} is ${onBroker} on the broker, config says ${inConfig}${argumentHint(failure.kind, failure.name, failure.argument)}`;
}
