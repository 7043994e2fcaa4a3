/**
 * The wait a retry asks for: `msg.retry.delay` (ms) set by the flow, and a transient HTTP status
 * rule's `Retry-After` — the longer of the two. Warned (rarely) where the configuration cannot wait
 * that long.
 */
import type { Classification } from '../../lib/classify';
import { shortWaitWarning, type RetryTopologyConfig } from '../../lib/topology';
import type { NodeMessage } from '../shared/node-red';

/** `msg.retry.delay` when it is a number of ms (0 or more), else 0. */
export function flowDelay(msg: NodeMessage): number {
  const retry = msg.retry as { delay?: unknown } | undefined;
  const delay = typeof retry?.delay === 'string' && retry.delay.trim() !== '' ? Number(retry.delay) : retry?.delay;
  return typeof delay === 'number' && Number.isFinite(delay) && delay > 0 ? Math.round(delay) : 0;
}

/** The wait a retry asks for (ms, 0: none): the flow's and the error rule's `Retry-After`, the longer. */
export function requestedDelay(msg: NodeMessage, classification?: Classification): number {
  return Math.max(flowDelay(msg), classification?.delayMs ?? 0);
}

/** Warns that a retry waits less than asked: the first time, then once in every 1000. */
export class ShortWaitWarnings {
  private seen = 0;

  constructor(private readonly warn: (text: string) => void) {}

  check(topology: RetryTopologyConfig | undefined, msg: NodeMessage, requestedMs: number): void {
    if (!topology || requestedMs <= 0) return;
    const attempt = (msg.retry as { attempt?: unknown } | undefined)?.attempt;
    const text = shortWaitWarning(topology, typeof attempt === 'number' ? attempt : 1, requestedMs);
    if (text === undefined) return;
    if (this.seen++ % 1000 === 0) this.warn(text);
  }
}
