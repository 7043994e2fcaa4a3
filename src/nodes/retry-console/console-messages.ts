/**
 * What the retry-console node sends, shaped for Dashboard 2.0's widgets (pure): the parking groups as
 * the rows of a `ui-table`, the history as the points of a `ui-chart` (one series per count, summed
 * over the configuration's consumers), the consumers' state in one line for a `ui-text`, and what a
 * replay or purge asks and answers for a `ui-notification`.
 */
import type { HealthReport } from '../../lib/health';
import { COUNTED, MINUTE_MS, type ConsumerHistory, type Counted } from '../../lib/observe';
import type { ParkedGroup } from '../../lib/parking';
import type { Translate } from '../shared/i18n';

/** One table row: a group of parked messages. */
export interface GroupRow {
  /** The folded park reason: what `msg.group` selects. */
  group: string;
  /** One of its reasons in full. */
  reason: string;
  count: number;
  first: string;
  last: string;
  /** Replayed before and parked again. */
  replayed: number;
}

const when = (iso: string | null): string => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : '');

export function groupRows(groups: readonly ParkedGroup[]): GroupRow[] {
  return groups.map((g) => ({ group: g.key, reason: g.example ?? g.key, count: g.count, first: when(g.firstAt), last: when(g.lastAt), replayed: g.replayed }));
}

export type HistorySeriesName = Counted | 'depth';
export const HISTORY_SERIES: readonly HistorySeriesName[] = [...COUNTED, 'depth'];

/** One chart point: `time` the minute's start (ms), `series` the count's name. */
export interface HistoryPoint {
  time: number;
  series: HistorySeriesName;
  value: number;
}

/** The chosen series from `msg.series` (a name or an array of them); all when none is named. */
export function seriesOf(value: unknown): HistorySeriesName[] {
  const names = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  const chosen = HISTORY_SERIES.filter((s) => names.includes(s));
  return chosen.length > 0 ? chosen : [...HISTORY_SERIES];
}

/** The consumers' minutes summed (a depth minute nobody knows is left out), as points per series, oldest first. */
export function historyPoints(consumers: readonly ConsumerHistory[], series: readonly HistorySeriesName[]): HistoryPoint[] {
  const first = consumers[0];
  if (!first) return [];
  const points: HistoryPoint[] = [];
  for (const name of series) {
    for (let i = 0; i < first.minutes; i++) {
      let value = 0;
      let known = false;
      for (const c of consumers) {
        const v = c[name][i];
        if (v !== null && v !== undefined) {
          value += v;
          known = true;
        }
      }
      if (known) points.push({ time: first.start + i * MINUTE_MS, series: name, value });
    }
  }
  return points;
}

/** The consumers of a main queue in the health report, in one line: the report's status first, then each consumer's. */
export function statusLine(report: HealthReport, queue: string, t: Translate): { text: string; consumers: HealthReport['consumers'] } {
  const consumers = report.consumers.filter((c) => c.queue === queue);
  const parts = consumers.map((c) => {
    const kill = c.circuit ? t('retry-console.killSwitch', { state: t(`retry-console.circuit.${c.circuit}`) }) : t('retry-console.killSwitchOff');
    return `${c.name || c.id}: ${c.reason ?? c.state} · ${kill}`;
  });
  const head = t(`retry-console.health.${report.status === 'not ready' ? 'notReady' : report.status}`);
  return { text: [head, ...(parts.length > 0 ? parts : [t('retry-console.noConsumer')])].join(' — '), consumers };
}

export type ConsoleAction = 'replay' | 'purge';

/** The question a replay or purge asks before it runs. */
export function question(action: ConsoleAction, group: GroupRow | undefined, queue: string, t: Translate): string {
  if (!group) return t(`retry-console.ask.${action}All`, { queue });
  // A group named by its key alone (msg.group): its count is not known here.
  return Number.isFinite(group.count) ? t(`retry-console.ask.${action}Group`, { count: group.count, key: group.reason, queue }) : t(`retry-console.ask.${action}GroupAny`, { key: group.reason, queue });
}

/** What a replay or purge did, in words. */
export function answer(action: ConsoleAction, result: Record<string, unknown>, t: Translate): string {
  const count = Number(action === 'replay' ? result.replayed : result.purged) || 0;
  return t(`retry-console.done.${action}`, { count, left: Number(result.remaining) || 0 });
}
