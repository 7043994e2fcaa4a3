/**
 * A partitioned consumer's status line: the most urgent partition first (red, then blocked), else on how
 * many of its partitions it is active and the counts of all. Pure.
 *
 * "Active": a partition this instance holds (its share among the instances, `lib/consume/members.ts`)
 * and consumes; the others stand by (paused as `standby`, no consumer). While a giver still finishes
 * what it has in flight, the broker's single active consumer feeds the giver, not yet this one.
 */
import type { SessionState, SessionStats } from '../../lib/consume';
import type { Translate } from '../shared/i18n';
import type { NodeStatus } from '../shared/node-red';
import { hasChannel, statsText } from './consumer-status';

export interface PartitionView {
  index: number;
  state: SessionState;
  stats: SessionStats;
  /** The session's own status (undefined: waiting for the connection). */
  status: NodeStatus | undefined;
}

/** Held by another instance: this one has no consumer on it. */
function standingBy(p: PartitionView): boolean {
  return p.state.phase === 'paused' && p.state.detail === 'standby';
}

/** The counts of every partition, summed; the parking depth is the shared parking queue's. */
export function sumStats(all: SessionStats[]): SessionStats {
  const sum: SessionStats = { inFlight: 0, delivered: 0, acked: 0, retried: 0, parked: 0, duplicates: 0, waiting: 0 };
  for (const s of all) {
    sum.inFlight += s.inFlight;
    sum.delivered += s.delivered;
    sum.acked += s.acked;
    sum.retried += s.retried;
    sum.parked += s.parked;
    sum.duplicates += s.duplicates;
    sum.waiting += s.waiting;
    if (s.parkingDepth !== undefined) sum.parkingDepth = Math.max(sum.parkingDepth ?? 0, s.parkingDepth);
    if (s.argumentsUnchecked) sum.argumentsUnchecked = true;
    if (s.rateLimited) sum.rateLimited = (sum.rateLimited ?? 0) + s.rateLimited;
  }
  return sum;
}

export function partitionsStatus(parts: PartitionView[], t: Translate, rateLimit = 0): NodeStatus | undefined {
  const urgent = parts.find((p) => p.status?.fill === 'red') ?? parts.find((p) => p.state.phase === 'blocked' || p.state.phase === 'circuit-open' || p.state.phase === 'store-down');
  if (urgent?.status) return { ...urgent.status, text: t('retry-consumer.status.partition', { index: urgent.index, text: urgent.status.text ?? '' }) };
  const withChannel = parts.filter((p) => hasChannel(p.state));
  if (withChannel.length === 0) return parts.find((p) => p.status !== undefined)?.status;
  const stats = sumStats(parts.map((p) => p.stats));
  const held = withChannel.filter((p) => !standingBy(p));
  const paused = held.length > 0 && held.every((p) => p.state.phase === 'paused');
  const text = t('retry-consumer.status.partitions', { active: held.filter((p) => p.state.phase === 'consuming').length, count: parts.length, stats: statsText(stats, t, rateLimit) });
  const fill = paused ? 'grey' : stats.parkingDepth || stats.argumentsUnchecked || withChannel.length < parts.length ? 'yellow' : 'green';
  return { fill, shape: 'dot', text: paused ? t('retry-consumer.status.paused', { stats: text }) : text };
}
