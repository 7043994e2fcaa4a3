/**
 * The wait a retry asks for: `msg.retry.delay` or `msg.amqp.retry.delay` (ms) set by the flow, and a
 * transient HTTP status rule's `Retry-After` — the longest. Warned (rarely) where the configuration
 * cannot wait that long.
 */
import type { Classification } from '../../lib/classify';
import { shortWaitWarning, type RetryTopologyConfig } from '../../lib/topology';
import type { NodeMessage } from '../shared/node-red';
import { askedDelays } from './msg-retry';

/** A wait the flow set, when it is a number of ms (0 or more, a numeric string too), else 0. */
function delayOf(value: unknown): number {
  const delay = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof delay === 'number' && Number.isFinite(delay) && delay > 0 ? Math.round(delay) : 0;
}

/**
 * The wait the flow asked for: `msg.retry.delay` or `msg.amqp.retry.delay`, the longer (the second
 * where a core node replaced `msg.retry`, as the http request node does); 0: none.
 */
export function flowDelay(msg: NodeMessage): number {
  const [onRetry, onAmqp] = askedDelays(msg);
  return Math.max(delayOf(onRetry), delayOf(onAmqp));
}

/** The wait a retry asks for (ms, 0: none): the flow's and the error rule's `Retry-After`, the longer. */
export function requestedDelay(msg: NodeMessage, classification?: Classification): number {
  return Math.max(flowDelay(msg), classification?.delayMs ?? 0);
}

/** Says a warning the first time, then once in every 1000: one that every message may cause, not one per message. */
export class Rarely {
  private seen = 0;

  constructor(private readonly warn: (text: string) => void) {}

  /** `text` is made only when it is said (a translated text, say). */
  say(text: () => string): void {
    if (this.seen++ % 1000 === 0) this.warn(text());
  }
}

/** Warns that a retry waits less than asked: the first time, then once in every 1000. */
export class ShortWaitWarnings {
  private readonly rarely: Rarely;

  constructor(warn: (text: string) => void) {
    this.rarely = new Rarely(warn);
  }

  /** `attempt`: the retried delivery's (a batch item's, or msg.amqp.retry's). */
  check(topology: RetryTopologyConfig | undefined, attempt: number, requestedMs: number): void {
    if (!topology || requestedMs <= 0) return;
    const text = shortWaitWarning(topology, attempt, requestedMs);
    if (text !== undefined) this.rarely.say(() => text);
  }
}
