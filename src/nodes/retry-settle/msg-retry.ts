/**
 * The retry info a retry consumer put on a msg, read back at the settle. The consumer puts it twice,
 * as one object: on `msg.retry` and on `msg.amqp.retry`. Core nodes write `msg.retry` (the http
 * request node sets it to 0 on every response) and never `msg.amqp`, so `msg.amqp.retry` is read
 * first. Pure.
 */
import type { NodeMessage } from '../shared/node-red';

type Fields = Record<string, unknown>;

function fields(value: unknown): Fields | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Fields) : undefined;
}

/** `msg.amqp.retry`, the consumer's own copy: undefined on a msg without it (built by hand, or by an older consumer). */
export function consumerRetry(msg: NodeMessage): Fields | undefined {
  return fields(fields(msg.amqp)?.retry);
}

/** The attempt the msg tells: `msg.amqp.retry.attempt`, else `msg.retry.attempt`; undefined when neither is a number. */
export function msgAttempt(msg: NodeMessage): number | undefined {
  const attempt = consumerRetry(msg)?.attempt ?? fields(msg.retry)?.attempt;
  return typeof attempt === 'number' ? attempt : undefined;
}

/** The waits a flow may have asked for, as it set them: `msg.retry.delay` and `msg.amqp.retry.delay`. */
export function askedDelays(msg: NodeMessage): [unknown, unknown] {
  return [fields(msg.retry)?.delay, consumerRetry(msg)?.delay];
}

/**
 * What `msg.retry` is now when it is no longer what the consumer put there (no longer an object
 * with the attempt of `msg.amqp.retry`): `0` (the http request node's), `undefined`, `{delay}` (an
 * object of the flow's, by its keys). undefined while it still is, and on a msg without
 * `msg.amqp.retry` to compare with.
 */
export function replacedRetry(msg: NodeMessage): string | undefined {
  const attempt = consumerRetry(msg)?.attempt;
  if (typeof attempt !== 'number') return undefined;
  const now = fields(msg.retry);
  if (now?.attempt === attempt) return undefined;
  if (now !== undefined) return `{${Object.keys(now).join(', ')}}`;
  return msg.retry === undefined ? 'undefined' : (JSON.stringify(msg.retry) ?? typeof msg.retry);
}
