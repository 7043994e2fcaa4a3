/**
 * What AMQP 0-9-1 (as amqplib encodes it) can carry in message properties and headers, checked before
 * a publish so that a bad value is a clear error naming it, not an exception from the encoder. Pure.
 */

/** Properties the protocol sends as short strings: at most 255 bytes. */
const SHORT_STRING_PROPERTIES = ['contentType', 'contentEncoding', 'correlationId', 'replyTo', 'expiration', 'messageId', 'type', 'userId', 'appId'] as const;

/** Why a header value cannot be encoded, or undefined when it can. `path` names it in the message. */
function headerValueProblem(value: unknown, path: string, seen: Set<object>): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isNaN(value) ? `${path} is NaN` : undefined;
    case 'undefined':
      // amqplib leaves undefined out of a table, but cannot encode it in an array.
      return undefined;
    case 'object':
      break;
    default:
      return `${path} is a ${typeof value}, which AMQP cannot carry (use a string or a number)`;
  }
  if (value === null || Buffer.isBuffer(value)) return undefined;
  if (value instanceof Date) return `${path} is a Date, which AMQP headers cannot carry as such (use an ISO string, or {"!": "timestamp", "value": seconds})`;
  if (seen.has(value)) return `${path} refers to itself (a circular structure)`;
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) {
        const problem = item === undefined ? `${path}[${i}] is undefined` : headerValueProblem(item, `${path}[${i}]`, seen);
        if (problem) return problem;
      }
      return undefined;
    }
    // {"!": type, value}: amqplib's way to give a type; it checks the value itself.
    if (Object.hasOwn(value, '!')) return undefined;
    for (const [key, item] of Object.entries(value)) {
      if (Buffer.byteLength(key) > 255) return `${path} has a key longer than 255 bytes`;
      const problem = headerValueProblem(item, `${path}.${key}`, seen);
      if (problem) return problem;
    }
    return undefined;
  } finally {
    seen.delete(value);
  }
}

/** The first problem that keeps these publish options from being sent, or undefined. */
export function publishOptionsProblem(options: Record<string, unknown>): string | undefined {
  for (const key of SHORT_STRING_PROPERTIES) {
    const value = options[key];
    if (value === undefined || value === null) continue;
    // amqplib turns a numeric expiration into its string.
    if (key === 'expiration' && typeof value === 'number') continue;
    if (typeof value !== 'string') return `property ${key} must be a string (got ${typeof value})`;
    if (Buffer.byteLength(value) > 255) return `property ${key} is longer than 255 bytes, the AMQP limit`;
  }
  const priority = options.priority;
  if (priority !== undefined && !(Number.isInteger(priority) && (priority as number) >= 0 && (priority as number) <= 255)) {
    return 'property priority must be a whole number from 0 to 255';
  }
  const headers = options.headers;
  if (headers === undefined || headers === null) return undefined;
  if (typeof headers !== 'object' || Array.isArray(headers) || Buffer.isBuffer(headers)) return 'headers must be an object';
  return headerValueProblem(headers, 'headers', new Set());
}

/** The last few conversions: an `x-death` has an entry per (queue, reason), each with its own second. */
const ISO_SLOTS = 4;
const isoSeconds: number[] = new Array<number>(ISO_SLOTS).fill(NaN);
const isoTexts: string[] = new Array<string>(ISO_SLOTS).fill('');
let isoNext = 0;
/**
 * An AMQP timestamp (seconds) as an ISO 8601 string. The last few are remembered: the times in the
 * `x-death` of a burst of retried messages are mostly the same few seconds (the rejection and the
 * expiry of the retry queue, usually a different second each), and each redelivery reads them twice
 * (`msg.retry.deaths`, `msg.amqp.headers`).
 */
export function isoFromSeconds(seconds: number): string | undefined {
  for (let i = 0; i < ISO_SLOTS; i += 1) if (isoSeconds[i] === seconds) return isoTexts[i];
  const date = new Date(seconds * 1000);
  // Out of Date's range (a forged header): no time, rather than a RangeError in the consumer.
  if (Number.isNaN(date.getTime())) return undefined;
  const iso = date.toISOString();
  isoSeconds[isoNext] = seconds;
  isoTexts[isoNext] = iso;
  isoNext = (isoNext + 1) % ISO_SLOTS;
  return iso;
}

/**
 * A header value as amqplib decoded it, as plain data a flow can read: its `{'!': type, value}`
 * wrappers unwrapped — timestamps (seconds) as ISO 8601 strings, like `msg.retry.deaths[].time`,
 * decimals as numbers — Dates as ISO strings, bigints as numbers. Buffers (AMQP byte arrays) stay
 * Buffers, or become UTF-8 text with `buffersAsText` (JSON views).
 *
 * On every delivery's headers (a retried one's `x-death` has a dozen values): plain loops, the
 * common types first; about half the time of a generic map / Object.keys walk.
 */
export function plainHeaderValue(value: unknown, buffersAsText = false): unknown {
  if (typeof value !== 'object' || value === null) return typeof value === 'bigint' ? Number(value) : value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i += 1) out[i] = plainHeaderValue(value[i], buffersAsText);
    return out;
  }
  if (Buffer.isBuffer(value)) return buffersAsText ? value.toString('utf8') : value;
  if (value instanceof Date) return value.toISOString();
  const record = value as Record<string, unknown>;
  const type = record['!'];
  if (type !== undefined && 'value' in record) {
    const inner = record.value;
    if (type === 'timestamp' && typeof inner === 'number') return isoFromSeconds(inner) ?? inner;
    if (type === 'decimal' && inner !== null && typeof inner === 'object') {
      const { places, digits } = inner as { places?: unknown; digits?: unknown };
      if (typeof places === 'number' && typeof digits === 'number') return digits / 10 ** places;
    }
    return plainHeaderValue(inner, buffersAsText);
  }
  // A copy of the table's own shape (no property added one by one), then the values that need it.
  const out: Record<string, unknown> = { ...record };
  for (const key in out) {
    const item = out[key];
    if (Object.hasOwn(out, key) && (typeof item === 'object' ? item !== null : typeof item === 'bigint')) out[key] = plainHeaderValue(item, buffersAsText);
  }
  return out;
}
