/**
 * The retry consumer's status line: the session's state and counts, the most urgent fact first, in
 * the runtime's language (or as a catalog key when it holds no numbers).
 */
import type { BrokerCancel, CircuitView, SessionState, SessionStats } from '../../lib/consume';
import { formatDelay } from '../../lib/topology';
import { statusKey, type Translate } from '../shared/i18n';
import type { NodeStatus } from '../shared/node-red';
import { topologyStatusText } from './topology-status';

/** What the status shows besides the session's state and counts. */
export interface StatusContext {
  /** Why the broker blocks publishing, while it does. */
  blockedBy: string | undefined;
  /** The deduplication store, named. */
  store: string;
  /** The kill switch, when on. */
  circuit: CircuitView | undefined;
  /** The rate limit (messages a second), 0: none. */
  rateLimit: number;
  /** The deduplication store forgets every processed key on a restart (a Redis server that keeps nothing on disk). */
  storeForgets?: boolean;
}

export function statsText(stats: SessionStats, t: Translate, rateLimit = 0): string {
  const waiting = stats.parkingDepth ? t('retry-consumer.status.waiting', { count: stats.parkingDepth }) : '';
  // Holding messages back to the rate limit: said before the counts.
  const limited = stats.rateLimited ? t('retry-consumer.status.rateLimited', { rate: rateLimit }) : '';
  // The most urgent first: messages waiting in parking for someone; then the counts (≡ duplicates, ✓ acked, ↻ retried, ⚑ parked).
  const duplicates = stats.duplicates ? `≡${stats.duplicates} ` : '';
  return waiting + limited + t('retry-consumer.status.stats', { inFlight: stats.inFlight, acked: stats.acked, retried: stats.retried, parked: stats.parked, duplicates });
}

export function sessionStatus(state: SessionState, stats: SessionStats, t: Translate, context: StatusContext): NodeStatus | undefined {
  const { blockedBy, store, circuit, rateLimit, storeForgets } = context;
  switch (state.phase) {
    case 'consuming':
      // Probing after the kill switch tripped: one message at a time until enough succeed in a row.
      if (circuit?.state === 'probing') return { fill: 'yellow', shape: 'dot', text: t('retry-consumer.status.circuitProbing', { probed: circuit.probed, probes: circuit.probes }) };
      // Parks and tier retries wait while the broker blocks publishing: say why messages stay in flight.
      if (blockedBy !== undefined) return { fill: 'yellow', shape: 'dot', text: statsText(stats, t, rateLimit) + t('retry-consumer.status.brokerBlocked', { reason: blockedBy }) };
      // Yellow while the parking queue holds messages (someone should look at them), while the
      // topology's arguments could not be compared (check mode without the management API), or while
      // the deduplication store keeps nothing on disk.
      return {
        fill: stats.parkingDepth || stats.argumentsUnchecked || storeForgets ? 'yellow' : 'green',
        shape: 'dot',
        text: statsText(stats, t, rateLimit) + (stats.argumentsUnchecked ? t('retry-consumer.status.argsUnchecked') : '') + (storeForgets ? t('retry-dedupe.status.forgets') : ''),
      };
    case 'circuit-open':
      return { fill: 'yellow', shape: 'ring', text: t('retry-consumer.status.circuitOpen', { seconds: Math.ceil((circuit?.probeInMs ?? 0) / 1000) }) };
    case 'blocked':
      return { fill: 'yellow', shape: 'dot', text: state.detail ?? t('retry-consumer.status.blocked') };
    case 'paused':
      return { fill: 'grey', shape: 'dot', text: t('retry-consumer.status.paused', { stats: statsText(stats, t, rateLimit) }) };
    case 'store-down':
      // The store named; why it failed is in the log. Its table missing or not as expected is not a database down.
      return { fill: 'red', shape: 'ring', text: t(state.storeProblem === 'schema' ? 'retry-consumer.status.storeTable' : 'retry-consumer.status.storeDown', { store }) };
    case 'checking-topology':
      return { fill: 'yellow', shape: 'ring', text: statusKey('retry-consumer.status.checking') };
    case 'topology-error':
    case 'channel-lost':
      // A basic.cancel from the broker: why (a deleted queue, a consumer timeout on 4.3, a leader moved); setting up again.
      if (state.cancelled) return cancelStatus(state.cancelled, t);
      // A check's findings as one line; the error (and the log) has every object's sentence.
      return { fill: 'red', shape: 'ring', text: (state.objects && topologyStatusText(state.objects, t)) ?? state.detail ?? state.phase };
    case 'stopped':
      return { fill: 'grey', shape: 'ring', text: statusKey('retry-consumer.status.stopped') };
    default:
      return undefined; // waiting for the connection: the broker's status says why
  }
}

/** A consumer the broker cancelled: red while its queue is gone (nothing to consume until it is declared again), else yellow, consuming again. */
export function cancelStatus(cancelled: BrokerCancel, t: Translate): NodeStatus {
  switch (cancelled.cause) {
    case 'deleted':
      return { fill: 'red', shape: 'ring', text: statusKey('retry-consumer.status.cancelledDeleted') };
    case 'consumer-timeout':
      return cancelled.timeoutMs === undefined
        ? { fill: 'yellow', shape: 'ring', text: statusKey('retry-consumer.status.cancelledTimeoutDefault') }
        : { fill: 'yellow', shape: 'ring', text: t('retry-consumer.status.cancelledTimeout', { timeout: formatDelay(cancelled.timeoutMs) }) };
    case 'leader-moved':
      return { fill: 'yellow', shape: 'ring', text: statusKey('retry-consumer.status.cancelledLeader') };
    default:
      return { fill: 'yellow', shape: 'ring', text: statusKey('retry-consumer.status.cancelled') };
  }
}

/** Phases in which the consumer has its channel: its own status wins over the broker's. */
export function hasChannel(state: SessionState): boolean {
  return state.phase === 'consuming' || state.phase === 'paused' || state.phase === 'circuit-open';
}
