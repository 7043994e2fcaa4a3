/**
 * What each msg.topic of a retry console answers, as the outputs it sends on: the parking groups
 * (output 1), the history (2), the state (3), a replay or purge's question (4) and answer (5). The
 * same code as the editor's parking browser and its admin endpoints (parking-actions.ts,
 * history-endpoint.ts, the health report); every replay and purge is written to Node-RED's audit log.
 */
import { randomUUID } from 'node:crypto';
import { healthReport } from '../../lib/health';
import type { GroupResult } from '../../lib/parking';
import { collectHealth } from '../shared/health-collect';
import { audit } from '../shared/audit';
import { historyAnswer, minutesOf } from '../shared/history-endpoint';
import type { Translate } from '../shared/i18n';
import { record, type Node, type NodeAPI, type NodeMessage } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { runParkingAction } from '../shared/parking-actions';
import type { RetryConfigNode } from '../shared/retry-config-node';
import { answer, groupRows, historyPoints, question, seriesOf, statusLine, type ConsoleAction, type GroupRow, type HistorySeriesName } from './console-messages';

export const TOPICS = ['refresh', 'groups', 'history', 'status', 'replay', 'purge'] as const;
export type Topic = (typeof TOPICS)[number];
/** A replay of a group moves at most this many at once (as the parking browser's). */
const REPLAY_LIMIT = 10_000;
const OUTPUTS = 5;

export type Outputs = Array<NodeMessage | null>;
const on = (output: number, msg: NodeMessage): Outputs => Array.from({ length: OUTPUTS }, (_v, i) => (i === output ? msg : null));

/** The group a replay or purge names: `msg.group` (its key), else a table row in `msg.row` or `msg.payload`. */
function groupOf(msg: NodeMessage): GroupRow | undefined {
  const row = [msg.row, msg.payload].map(record).find((r) => typeof r.group === 'string' && r.group !== '');
  if (typeof msg.group === 'string' && msg.group !== '') {
    const key = msg.group;
    return row && row.group === key ? (row as unknown as GroupRow) : { group: key, reason: key, count: NaN, first: '', last: '', replayed: 0 };
  }
  return row as unknown as GroupRow | undefined;
}

/** Whether a replay or purge is confirmed: by Dashboard 2.0's notification (its confirm button) or by `msg.confirmed`. */
const confirmed = (msg: NodeMessage): boolean => msg.confirmed === true || msg.payload === 'confirm_clicked';

export interface ConsoleSettings {
  /** Minutes of history unless a msg names its own. */
  minutes: number;
  /** The history's series the node sends unless a msg names its own (empty: all). */
  series: string[];
}

export class ConsoleTopics {
  private busy = false;

  constructor(
    private readonly RED: NodeAPI,
    private readonly node: Node,
    private readonly config: RetryConfigNode | undefined,
    private readonly settings: ConsoleSettings,
    private readonly t: Translate,
  ) {}

  /** The outputs a topic sends, one array per send. */
  run(topic: Topic, msg: NodeMessage): Promise<Outputs[]> {
    switch (topic) {
      case 'refresh':
        return this.refresh(msg);
      case 'groups':
        return this.groups().then((m) => (m ? [on(0, m)] : []));
      case 'history':
        return Promise.resolve([on(1, this.history(msg))]);
      case 'status':
        return this.status().then((m) => [on(2, m)]);
      default:
        return this.act(topic, msg);
    }
  }

  private usable(): RetryConfigNode {
    const { config, t } = this;
    if (!config?.topology || !config.broker) throw new Error(t('retry-console.errors.config', { why: config ? config.problems.join('; ') || 'no broker' : t('retry-console.errors.noConfig') }));
    return config;
  }

  /** One parking queue read or action at a time: each takes its messages for a moment. */
  private async inTurn<T>(work: () => Promise<T>): Promise<T | undefined> {
    if (this.busy) return undefined;
    this.busy = true;
    try {
      return await work();
    } finally {
      this.busy = false;
    }
  }

  private async groups(): Promise<NodeMessage | undefined> {
    const c = this.usable();
    const result = await this.inTurn(() => runParkingAction('groups', {}, c, { max: 0, resetAttempts: true, userId: `retry-console-${this.node.id}-${randomUUID()}` }));
    if (!result) return undefined;
    const grouped = result as unknown as GroupResult;
    this.node.status({ fill: grouped.total > 0 ? 'yellow' : 'green', shape: 'dot', text: this.t('retry-console.status.groups', { total: grouped.total, count: grouped.groups.length }) });
    return { topic: 'groups', payload: groupRows(grouped.groups), parking: { queue: c.topology?.parkingQueue, total: grouped.total, ungrouped: grouped.ungrouped } };
  }

  private history(msg: NodeMessage): NodeMessage {
    const c = this.usable();
    const found = historyAnswer(this.RED, { config: c.id, minutes: msg.minutes === undefined ? this.settings.minutes : minutesOf(msg.minutes) });
    const series: HistorySeriesName[] = seriesOf(msg.series ?? this.settings.series);
    return { topic: 'history', payload: historyPoints(found.consumers, series), action: 'replace', history: found };
  }

  private async status(): Promise<NodeMessage> {
    const c = this.usable();
    const report = healthReport(await collectHealth(this.RED), Date.now());
    const line = statusLine(report, c.topology?.mainQueue ?? '', this.t);
    return { topic: 'status', payload: line.text, ready: report.ready, health: report.status, consumers: line.consumers };
  }

  private async act(action: ConsoleAction, msg: NodeMessage): Promise<Outputs[]> {
    const c = this.usable();
    const queue = c.topology?.parkingQueue ?? '';
    const group = groupOf(msg);
    // Back from the question unconfirmed (dismissed, timed out, closed): nothing to do.
    if (msg.asked === action && !confirmed(msg)) return [];
    const client = msg._client === undefined ? {} : { _client: msg._client };
    if (!confirmed(msg)) return [on(3, { ...client, topic: action, group: group?.group, row: group, asked: action, payload: question(action, group, queue, this.t) })];
    // Who acted: the dashboard's user when it has a login, else this node (the replayed copy's replayed-by).
    const user = record(record(msg._client).user);
    const by = typeof user.username === 'string' && user.username !== '' ? user.username : `${NODE_TYPE.retryConsole} ${this.node.id}`;
    const result = await this.inTurn(() => runParkingAction(action, group ? { group: group.group } : {}, c, { max: REPLAY_LIMIT, resetAttempts: true, userId: `retry-console-${this.node.id}-${randomUUID()}`, by }));
    if (!result) throw new Error(this.t('retry-console.errors.busy', { action }));
    const count = Number(action === 'replay' ? result.replayed : result.purged) || 0;
    audit(this.RED, action, { source: NODE_TYPE.retryConsole, node: this.node.id, config: c.id, queue, group: group?.group ?? null, count, remaining: result.remaining, by, ...(typeof user.username === 'string' ? { user: user.username } : {}) });
    const after = await this.groups();
    return [on(4, { ...client, topic: action, group: group?.group, payload: answer(action, result, this.t), result }), ...(after ? [on(0, after)] : [])];
  }

  private async refresh(msg: NodeMessage): Promise<Outputs[]> {
    const found = await this.groups();
    return [[found ?? null, this.history(msg), await this.status(), null, null]];
  }
}
