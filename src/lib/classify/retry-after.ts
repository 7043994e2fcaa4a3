/**
 * An HTTP `Retry-After` as a wait: delay-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`), read from the failed msg's headers (the http request node puts
 * the response's headers on `msg.headers`, names in lower case). Pure.
 */

/** The most a `Retry-After` may ask: a day. A longer one (or a date further away) is taken as a day. */
export const RETRY_AFTER_MAX_MS = 86_400_000;

/** The wait a `Retry-After` value asks for, in ms (a past date: 0), or undefined when it is neither form. */
export function parseRetryAfter(value: unknown, now: number): number | undefined {
  const text: unknown = Array.isArray(value) ? (value as unknown[])[0] : value;
  if (typeof text === 'number') return Number.isFinite(text) && text >= 0 ? Math.min(text * 1000, RETRY_AFTER_MAX_MS) : undefined;
  if (typeof text !== 'string') return undefined;
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, RETRY_AFTER_MAX_MS);
  // An HTTP date names its day of the week: a bare number or other text is not one.
  if (!/^[A-Za-z]{3},/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), RETRY_AFTER_MAX_MS);
}

/** The `Retry-After` of a failed msg (`msg.headers`, any case of the name), as a wait in ms; undefined without one. */
export function retryAfterOf(msg: unknown, now: number): number | undefined {
  const headers = msg !== null && typeof msg === 'object' ? (msg as { headers?: unknown }).headers : undefined;
  if (headers === null || typeof headers !== 'object') return undefined;
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (name.toLowerCase() === 'retry-after') return parseRetryAfter(value, now);
  }
  return undefined;
}
