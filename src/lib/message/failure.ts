/**
 * Failure metadata on parked messages, as operators know it from MassTransit's fault headers or
 * Spring AMQP's RepublishMessageRecoverer: the error's name, message and a truncated stack, the node
 * that failed, and the first and last failure time. Pure.
 */
import { findDeath, readDeaths, type DeathRecord } from './attempts';

/** Header the package writes when it republishes a retry: when the message first failed (ms since epoch). */
export const FIRST_FAILURE_HEADER = 'retry-first-failure';

export const FAILURE_HEADERS = {
  errorName: 'park-error-name',
  errorMessage: 'park-error-message',
  errorStack: 'park-error-stack',
  sourceId: 'park-error-source-id',
  sourceType: 'park-error-source-type',
  sourceName: 'park-error-source-name',
  firstFailure: 'park-first-failure-time',
  lastFailure: 'park-last-failure-time',
  /** What the retry configuration's error rules made of the failure: `permanent` or `transient`. */
  errorKind: 'park-error-kind',
} as const;

/** What a flow's error says about a failure: plain strings only. */
export interface FailureDetails {
  name?: string;
  message?: string;
  stack?: string;
  source?: { id?: string; type?: string; name?: string };
}

const MAX_MESSAGE = 1000;
const MAX_STACK_LINES = 10;
const MAX_STACK = 2000;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The first lines of a stack, bounded: enough to find the place, not a header that blows the frame. */
export function truncateStack(stack: string): string {
  const lines = stack.split('\n');
  let out = lines.slice(0, MAX_STACK_LINES).join('\n');
  if (lines.length > MAX_STACK_LINES) out += `\n    … ${lines.length - MAX_STACK_LINES} more lines`;
  return out.length > MAX_STACK ? `${out.slice(0, MAX_STACK - 1)}…` : out;
}

/** An error's message: an Error's or a Catch node's `message`, or the string itself. */
export function errorMessage(error: unknown): string | undefined {
  if (typeof error === 'string') return text(error);
  if (error === null || typeof error !== 'object') return undefined;
  return text((error as { message?: unknown }).message);
}

/**
 * An error's name: its `name`, else the Error class a message like `TypeError: …` starts with (a
 * Catch node's error object, a string).
 */
export function errorName(error: unknown, message = errorMessage(error)): string | undefined {
  const own = error !== null && typeof error === 'object' ? text((error as { name?: unknown }).name) : undefined;
  return own ?? (message ? /^([A-Z][\w$]*(?:Error|Exception)):/.exec(message)?.[1] : undefined);
}

/**
 * The details of `msg.error`: an Error (thrown in a function node), or a Catch node's error object
 * `{message, source: {id, type, name}, stack}` (whose message reads `TypeError: …` for an Error).
 * undefined for a plain string or nothing: then the reason text says it all.
 */
export function failureDetails(error: unknown): FailureDetails | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const e = error as { name?: unknown; message?: unknown; stack?: unknown; source?: unknown };
  const details: FailureDetails = {};
  const message = text(e.message);
  const name = errorName(error, message);
  if (name) details.name = name;
  if (message) details.message = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
  const stack = text(e.stack);
  if (stack) details.stack = truncateStack(stack);
  if (e.source !== null && typeof e.source === 'object') {
    const s = e.source as { id?: unknown; type?: unknown; name?: unknown };
    const source = { id: text(s.id), type: text(s.type), name: text(s.name) };
    details.source = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined));
  }
  return Object.keys(details).length > 0 ? details : undefined;
}

/**
 * When the message first failed (ms since epoch): the package's header (set on a republished retry),
 * the broker's first rejection from the main queue, or now for a first failure — the earliest.
 */
export function firstFailureMs(headers: Record<string, unknown> | undefined, mainQueue: string, now: number, deaths: DeathRecord[] = readDeaths(headers)): number {
  let first = now;
  const earlier = (ms: number): void => {
    if (Number.isFinite(ms) && ms > 0 && ms < first) first = ms;
  };
  earlier(Number(headers?.[FIRST_FAILURE_HEADER]));
  const rejected = findDeath(deaths, mainQueue, 'rejected')?.time;
  if (rejected !== undefined) earlier(Date.parse(rejected));
  return first;
}

/** The failure headers of a parked message. */
export function failureHeaders(details: FailureDetails | undefined, firstFailure: number, now: number, nowIso = new Date(now).toISOString(), kind?: 'permanent' | 'transient'): Record<string, string> {
  const headers: Record<string, string> = {
    [FAILURE_HEADERS.firstFailure]: firstFailure === now ? nowIso : new Date(firstFailure).toISOString(),
    [FAILURE_HEADERS.lastFailure]: nowIso,
  };
  if (kind !== undefined) headers[FAILURE_HEADERS.errorKind] = kind;
  if (!details) return headers;
  const pairs: Array<[string, string | undefined]> = [
    [FAILURE_HEADERS.errorName, details.name],
    [FAILURE_HEADERS.errorMessage, details.message],
    [FAILURE_HEADERS.errorStack, details.stack],
    [FAILURE_HEADERS.sourceId, details.source?.id],
    [FAILURE_HEADERS.sourceType, details.source?.type],
    [FAILURE_HEADERS.sourceName, details.source?.name],
  ];
  for (const [name, value] of pairs) if (value !== undefined) headers[name] = value;
  return headers;
}
