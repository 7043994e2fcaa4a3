/**
 * Attempt counting from RabbitMQ's `x-death` header.
 *
 * Pure functions, no broker needed. The rules that matter:
 * - the attempt count is the `count` of the `x-death` entry for (main queue, reason `rejected`),
 *   looked up by key: the order of the array changes between hops and broker versions;
 * - RabbitMQ 4 ignores an `x-death` header that a client republishes, so whenever this package
 *   republishes a message it also writes its own {@link ATTEMPT_HEADER}; the attempt count is the
 *   larger of the two sources.
 */
import { isoFromSeconds } from '../amqp';

/** Header this package writes when it republishes a message: failed attempts so far. Not `x-` prefixed on purpose. */
export const ATTEMPT_HEADER = 'retry-attempt';

/** Header this package writes when it republishes a message: when it was first seen (ms since epoch). */
export const FIRST_SEEN_HEADER = 'retry-first-seen';

/**
 * Header this package writes on a copy for a quorum retry tier: when it is due back in the main queue
 * (ms since epoch). The retry mover (retry-mover.ts) holds it until then.
 */
export const NOT_BEFORE_HEADER = 'retry-not-before';

/**
 * Headers this package writes when it republishes a message for a retry: the exchange and routing key
 * it was first published with. A republished copy travels through the retry route, and RabbitMQ 4
 * ignores the copy's `x-death`, so without them the original route would be lost.
 */
export const ORIGINAL_EXCHANGE_HEADER = 'retry-original-exchange';
export const ORIGINAL_ROUTING_KEY_HEADER = 'retry-original-routing-key';

/** One `x-death` entry, as plain data (times as ISO strings). */
export interface DeathRecord {
  queue: string;
  reason: string;
  count: number;
  exchange: string;
  routingKeys: string[];
  /** ISO 8601 time of the most recent death of this kind, when the broker gave one. */
  time?: string;
}

/** What `msg.retry` carries. */
export interface RetryInfo {
  /** 1 on the first delivery, 2 on the first retry, ... */
  attempt: number;
  /** 0 in ordered mode: no limit, processing waits until the message succeeds. */
  maxAttempts: number;
  /** Retries left after this attempt fails: `maxAttempts - attempt`, never below 0; null without a limit. */
  remaining: number | null;
  /** `x-first-death-reason` (e.g. `rejected`, `expired`, `delivery_limit`), or null on a first delivery. */
  firstDeathReason: string | null;
  deaths: DeathRecord[];
  /** Why the `x-death` header is one the broker cannot have written (a producer forged it): it then counts for nothing. */
  malformed?: string;
}

type Headers = Record<string, unknown> | undefined | null;

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !Buffer.isBuffer(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** amqplib decodes some AMQP field types as `{ '!': type, value }`; unwrap them. */
function unwrap(value: unknown): unknown {
  const rec = asRecord(value);
  if (rec && '!' in rec && 'value' in rec) return rec.value;
  return value;
}

function asNumber(value: unknown): number | undefined {
  const v = unwrap(value);
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

function asText(value: unknown): string | undefined {
  const v = unwrap(value);
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return undefined;
}

/** AMQP timestamps are seconds; amqplib may hand them over wrapped, as a number, or as a Date. */
function asIsoTime(value: unknown): string | undefined {
  const v = unwrap(value);
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : v.toISOString();
  const seconds = asNumber(v);
  return seconds === undefined ? undefined : isoFromSeconds(seconds);
}

/** What is wrong with one `x-death` entry (the `i`-th) that the broker cannot have written; undefined when nothing. */
function deathEntryProblem(entry: Record<string, unknown> | undefined, i: number): string | undefined {
  if (!entry) return `x-death entry ${i + 1} is not a table`;
  if (asText(entry.queue) === undefined || asText(entry.reason) === undefined) return `x-death entry ${i + 1} has no queue or reason`;
  if (!isCount(entry.count)) return `x-death entry ${i + 1} has count ${shownCount(unwrap(entry.count))}, not a whole number`;
  return undefined;
}

/**
 * The `x-death` header read in one pass: its entries as plain records (an entry without a queue or
 * reason is skipped, never thrown), and what is wrong with it when the broker cannot have written it
 * (see {@link malformedDeathHeader}).
 */
export function readDeathHeader(headers: Headers): { deaths: DeathRecord[]; malformed: string | undefined } {
  const raw = headers?.['x-death'];
  if (raw === undefined || raw === null) return { deaths: [], malformed: undefined };
  if (!Array.isArray(raw)) return { deaths: [], malformed: 'x-death is not an array' };
  // Arrays of the header's size, cut to what was read: an empty array grows a 17-slot store on its first push.
  const deaths = new Array<DeathRecord>(raw.length);
  let read = 0;
  let malformed: string | undefined;
  for (let i = 0; i < raw.length; i += 1) {
    const entry = asRecord(raw[i]);
    malformed ??= deathEntryProblem(entry, i);
    if (!entry) continue;
    const queue = asText(entry.queue);
    const reason = asText(entry.reason);
    if (queue === undefined || reason === undefined) continue;
    const keys = entry['routing-keys'];
    const routingKeys = new Array<string>(Array.isArray(keys) ? keys.length : 0);
    let kept = 0;
    if (Array.isArray(keys)) {
      for (const key of keys) {
        const text = asText(key);
        if (text !== undefined) routingKeys[kept++] = text;
      }
    }
    routingKeys.length = kept;
    const count = asNumber(entry.count) ?? 1;
    const exchange = asText(entry.exchange) ?? '';
    const time = asIsoTime(entry.time);
    // One literal per shape: a property added afterwards would cost a shape change and a property store.
    deaths[read++] = time === undefined ? { queue, reason, count, exchange, routingKeys } : { queue, reason, count, exchange, routingKeys, time };
  }
  deaths.length = read;
  return { deaths, malformed };
}

/** Reads the `x-death` header into plain records; anything malformed is skipped, never thrown. */
export function readDeaths(headers: Headers): DeathRecord[] {
  return readDeathHeader(headers).deaths;
}

/** A whole number as AMQP carries one (plain, bigint, or amqplib's `{ '!': type, value }`). */
function isCount(value: unknown): boolean {
  const v = unwrap(value);
  return (typeof v === 'number' && Number.isInteger(v) && v >= 0) || (typeof v === 'bigint' && v >= 0n);
}

function shownCount(value: unknown): string {
  if (value === undefined) return 'none';
  if (typeof value === 'string') return `'${value.slice(0, 40)}'`;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return value === null ? 'null' : 'a table';
}

/**
 * What is wrong with an `x-death` header the broker could not have written (a producer forged or
 * mangled it), or undefined when it is absent or well-formed. Such a message must never be
 * dead-lettered: RabbitMQ 3.10 adds 1 to the `count` of the matching entry, and a count that is not a
 * number crashes the queue, again on every redelivery, until it is unavailable.
 */
export function malformedDeathHeader(headers: Headers): string | undefined {
  const raw = headers?.['x-death'];
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) return 'x-death is not an array';
  for (let i = 0; i < raw.length; i += 1) {
    const problem = deathEntryProblem(asRecord(raw[i]), i);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The death record for (queue, reason), found by key — never by position. */
export function findDeath(deaths: DeathRecord[], queue: string, reason: string): DeathRecord | undefined {
  return deaths.find((d) => d.queue === queue && d.reason === reason);
}

/** Failed attempts so far according to this package's own header (0 when absent or malformed). */
export function attemptHeaderCount(headers: Headers): number {
  const n = asNumber(headers?.[ATTEMPT_HEADER]);
  return n !== undefined && n > 0 ? Math.floor(n) : 0;
}

/**
 * Failed attempts before this delivery: the larger of the broker's count for (main queue, `rejected`)
 * and the package's own header (which survives a republish on RabbitMQ 4).
 */
export function failedAttempts(headers: Headers, mainQueue: string): number {
  return Math.max(rejectedCount(headers, readDeaths(headers), mainQueue), attemptHeaderCount(headers));
}

/**
 * The broker's count for (main queue, `rejected`); 0 when the header is one the broker cannot have
 * written (`malformed`: what malformedDeathHeader says, when the caller has it already).
 */
function rejectedCount(headers: Headers, deaths: DeathRecord[], mainQueue: string, malformed = malformedDeathHeader(headers)): number {
  if (malformed !== undefined) return 0;
  return findDeath(deaths, mainQueue, 'rejected')?.count ?? 0;
}

export function retryInfo(headers: Headers, mainQueue: string, maxAttempts: number): RetryInfo {
  // A first delivery has no x-death: nothing to read or check (the hot path).
  const header = headers?.['x-death'] === undefined ? undefined : readDeathHeader(headers);
  const deaths = header ? header.deaths : [];
  const malformed = header?.malformed;
  const attempt = Math.max(rejectedCount(headers, deaths, mainQueue, malformed), attemptHeaderCount(headers)) + 1;
  const info: RetryInfo = {
    attempt,
    maxAttempts,
    remaining: Math.max(0, maxAttempts - attempt),
    firstDeathReason: asText(headers?.['x-first-death-reason']) ?? null,
    deaths,
  };
  if (malformed !== undefined) info.malformed = malformed;
  return info;
}

/** Whether a failure of this attempt must park rather than retry. */
export function attemptsExhausted(info: Pick<RetryInfo, 'attempt' | 'maxAttempts'>): boolean {
  return info.maxAttempts > 0 && info.attempt >= info.maxAttempts;
}

/** AMQP timestamps are seconds by the spec, but many publishers send ms: tell them apart by size. */
function timestampMs(value: unknown): number | undefined {
  const n = asNumber(value);
  if (n === undefined || n <= 0) return undefined;
  return n < 1e11 ? n * 1000 : n;
}

/**
 * When the message was first seen, as well as can be told: the package's own first-seen header, the
 * publisher's timestamp property, or the first rejection from the main queue — the earliest of them.
 * undefined when there is none (a first delivery without a timestamp).
 */
export function firstSeenMs(headers: Headers, timestamp: unknown, mainQueue: string, deaths: DeathRecord[] = readDeaths(headers)): number | undefined {
  const rejected = findDeath(deaths, mainQueue, 'rejected')?.time;
  const candidates = [asNumber(headers?.[FIRST_SEEN_HEADER]), timestampMs(timestamp), rejected === undefined ? undefined : Date.parse(rejected)];
  const known = candidates.filter((n): n is number => n !== undefined && Number.isFinite(n) && n > 0);
  return known.length > 0 ? Math.min(...known) : undefined;
}

/**
 * Where the message was originally published: the exchange and routing key recorded when it was
 * first rejected from the main queue, else those the package wrote on a republished retry, else
 * those of the current delivery. `deaths`: the header's records when the caller has read them already.
 */
export function originalRoute(
  headers: Headers,
  mainQueue: string,
  delivered: { exchange: string; routingKey: string },
  deaths?: DeathRecord[],
): { exchange: string; routingKey: string } {
  // A first delivery carries neither: skip reading x-death (the hot path).
  if (!headers || (headers['x-death'] === undefined && headers[ORIGINAL_ROUTING_KEY_HEADER] === undefined)) {
    return { exchange: delivered.exchange, routingKey: delivered.routingKey };
  }
  const death = findDeath(deaths ?? readDeaths(headers), mainQueue, 'rejected');
  if (death) return { exchange: death.exchange, routingKey: death.routingKeys[0] ?? delivered.routingKey };
  const exchange = asText(headers[ORIGINAL_EXCHANGE_HEADER]);
  const routingKey = asText(headers[ORIGINAL_ROUTING_KEY_HEADER]);
  if (exchange !== undefined && routingKey !== undefined) return { exchange, routingKey };
  return { exchange: delivered.exchange, routingKey: delivered.routingKey };
}
