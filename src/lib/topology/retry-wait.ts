/** How long a retry waits at least, given the wait the flow asked for (`msg.retry.delay`, `Retry-After`). Pure. */
import { brokerRetryBounds, brokerRetryDelay } from './broker-retry';
import { retryRoute, type RetryTopologyConfig } from './plan';
import { retryDelayFor } from './retry-queues';

export type RetryWaitConfig = Pick<RetryTopologyConfig, 'retryDelaysMs' | 'mainQueueArguments' | 'retryQueueArguments' | 'delayedRetry' | 'retryJitterPercent'>;

/**
 * The least the n-th failed attempt waits when `requestedMs` was asked for: the tier at least that
 * long (the longest when none is; jitter only adds). The one retry queue of the dead-letter route, and the broker's
 * own delay (min × failures, capped at max), cannot be lengthened per message: they may be shorter.
 */
export function retryWaitMs(config: RetryWaitConfig, failedAttempt: number, requestedMs = 0): number {
  const route = retryRoute(config);
  if (route === 'broker') return brokerRetryDelay(brokerRetryBounds(config.retryDelaysMs), failedAttempt);
  if (route === 'dead-letter') return config.retryDelaysMs[0] ?? 0;
  return retryDelayFor(config, failedAttempt, requestedMs);
}

/** One sentence when a retry waits less than was asked (and what to change), else undefined. */
export function shortWaitWarning(config: RetryWaitConfig, failedAttempt: number, requestedMs: number): string | undefined {
  const wait = retryWaitMs(config, failedAttempt, requestedMs);
  if (requestedMs <= wait) return undefined;
  const route = retryRoute(config);
  const fix =
    route === 'broker'
      ? "broker-native delayed retry waits the broker's delay (first retry delay × failures, at most the longest): raise the retry delays, or use retry queues"
      : route === 'dead-letter'
        ? 'one retry delay cannot be lengthened per message: add backoff tiers (e.g. 5s, 30s, 5m), a retry waits in the first tier at least that long'
        : 'no retry tier is that long: add a longer tier';
  return `a retry asked to wait ${requestedMs} ms (msg.retry.delay or Retry-After) but waits ${wait} ms: ${fix}`;
}
