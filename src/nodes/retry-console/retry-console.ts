/**
 * `retry console`: the operator's console of one retry configuration as msgs, for a Dashboard 2.0
 * page (or any flow). On a msg (msg.topic) or every few seconds it sends the parking groups (output 1,
 * rows for a ui-table), the consumers' history (output 2, points for a ui-chart) and their state with
 * the kill switch (output 3, a line for a ui-text); a replay or purge of a group first asks (output 4,
 * for a ui-notification with a confirm button) and runs once confirmed, saying what it did (output 5).
 * It runs the same code as the editor's parking browser and its admin endpoints (parking-actions.ts,
 * history-endpoint.ts, the health report), and writes every replay and purge to Node-RED's audit log.
 */
import { randomUUID } from 'node:crypto';
import { healthReport } from '../../lib/health';
import { readNumberField } from '../../lib/rules';
import type { GroupResult } from '../../lib/parking';
import { collectHealth } from '../retry-health/collect';
import { historyAnswer, minutesOf } from '../shared/history-endpoint';
import { translator } from '../shared/i18n';
import { audit } from '../shared/audit';
import { record, type Node, type NodeAPI, type NodeDef, type NodeMessage } from '../shared/node-red';
import { runParkingAction } from '../shared/parking-actions';
import { NUMBER_FIELDS } from '../shared/properties';
import { findRetryConfig } from '../shared/retry-config-node';
import { answer, groupRows, historyPoints, question, seriesOf, statusLine, type ConsoleAction, type GroupRow } from './console-messages';

const TOPICS = ['refresh', 'groups', 'history', 'status', 'replay', 'purge'] as const;
type Topic = (typeof TOPICS)[number];
/** A replay of a group moves at most this many at once (as the parking browser's). */
const REPLAY_LIMIT = 10_000;
const OUTPUTS = 5;

type Outputs = Array<NodeMessage | null>;
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

export = function register(RED: NodeAPI): void {
  const t = translator(RED);

  function RetryConsole(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const config = findRetryConfig(RED, def.config);
    const fields = NUMBER_FIELDS['retry-console'];
    const readEvery = readNumberField(def.every, fields.every);
    const readMinutes = readNumberField(def.minutes, fields.minutes);
    const problem = [readEvery, readMinutes].map((r) => ('problem' in r ? r.problem : undefined)).find((p) => p !== undefined);
    if (problem) node.status({ fill: 'red', shape: 'ring', text: problem });
    const every = 'value' in readEvery ? readEvery.value : 0;
    const minutes = 'value' in readMinutes ? readMinutes.value : fields.minutes.fallback;
    // The history's series the node sends unless a msg names its own (empty: all).
    const series = typeof def.series === 'string' ? def.series.split(',').map((name) => name.trim()) : [];
    let busy = false;

    const usable = (): NonNullable<typeof config> => {
      if (!config?.topology || !config.broker) throw new Error(t('retry-console.errors.config', { why: config ? config.problems.join('; ') || 'no broker' : t('retry-console.errors.noConfig') }));
      return config;
    };
    /** One parking queue read or action at a time: each takes its messages for a moment. */
    const inTurn = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
      if (busy) return undefined;
      busy = true;
      try {
        return await work();
      } finally {
        busy = false;
      }
    };

    const groups = async (): Promise<NodeMessage | undefined> => {
      const c = usable();
      const result = await inTurn(() => runParkingAction('groups', {}, c, { max: 0, resetAttempts: true, userId: `retry-console-${node.id}-${randomUUID()}` }));
      if (!result) return undefined;
      const grouped = result as unknown as GroupResult;
      node.status({ fill: grouped.total > 0 ? 'yellow' : 'green', shape: 'dot', text: t('retry-console.status.groups', { total: grouped.total, count: grouped.groups.length }) });
      return { topic: 'groups', payload: groupRows(grouped.groups), parking: { queue: c.topology?.parkingQueue, total: grouped.total, ungrouped: grouped.ungrouped } };
    };
    const history = (msg: NodeMessage): NodeMessage => {
      const c = usable();
      const found = historyAnswer(RED, { config: c.id, minutes: msg.minutes === undefined ? minutes : minutesOf(msg.minutes) });
      return { topic: 'history', payload: historyPoints(found.consumers, seriesOf(msg.series ?? series)), action: 'replace', history: found };
    };
    const status = async (): Promise<NodeMessage> => {
      const c = usable();
      const report = healthReport(await collectHealth(RED), Date.now());
      const line = statusLine(report, c.topology?.mainQueue ?? '', t);
      return { topic: 'status', payload: line.text, ready: report.ready, health: report.status, consumers: line.consumers };
    };
    const act = async (action: ConsoleAction, msg: NodeMessage): Promise<Outputs[]> => {
      const c = usable();
      const queue = c.topology?.parkingQueue ?? '';
      const group = groupOf(msg);
      // Back from the question unconfirmed (dismissed, timed out, closed): nothing to do.
      if (msg.asked === action && !confirmed(msg)) return [];
      const client = msg._client === undefined ? {} : { _client: msg._client };
      if (!confirmed(msg)) return [on(3, { ...client, topic: action, group: group?.group, row: group, asked: action, payload: question(action, group, queue, t) })];
      // Who acted: the dashboard's user when it has a login, else this node (the replayed copy's replayed-by).
      const user = record(record(msg._client).user);
      const by = typeof user.username === 'string' && user.username !== '' ? user.username : `retry-console ${node.id}`;
      const result = await inTurn(() => runParkingAction(action, group ? { group: group.group } : {}, c, { max: REPLAY_LIMIT, resetAttempts: true, userId: `retry-console-${node.id}-${randomUUID()}`, by }));
      if (!result) throw new Error(t('retry-console.errors.busy', { action }));
      const count = Number(action === 'replay' ? result.replayed : result.purged) || 0;
      audit(RED, action, { source: 'retry-console', node: node.id, config: c.id, queue, group: group?.group ?? null, count, remaining: result.remaining, by, ...(typeof user.username === 'string' ? { user: user.username } : {}) });
      const after = await groups();
      return [on(4, { ...client, topic: action, group: group?.group, payload: answer(action, result, t), result }), ...(after ? [on(0, after)] : [])];
    };
    const refresh = async (msg: NodeMessage): Promise<Outputs[]> => {
      const found = await groups();
      return [[found ?? null, history(msg), await status(), null, null]];
    };
    const run = (topic: Topic, msg: NodeMessage): Promise<Outputs[]> => {
      switch (topic) {
        case 'refresh':
          return refresh(msg);
        case 'groups':
          return groups().then((m) => (m ? [on(0, m)] : []));
        case 'history':
          return Promise.resolve([on(1, history(msg))]);
        case 'status':
          return status().then((m) => [on(2, m)]);
        default:
          return act(topic, msg);
      }
    };

    node.on('input', (msg, send, done) => {
      // Back from a question: what it asked, whatever the topic became on the way (a widget may set its own).
      const topic = TOPICS.find((name) => name === (msg.asked === 'replay' || msg.asked === 'purge' ? msg.asked : msg.topic));
      if (!topic) {
        done(new Error(t('retry-console.errors.topic', { topic: JSON.stringify(msg.topic ?? null) })));
        return;
      }
      run(topic, msg).then(
        (all) => {
          for (const outputs of all) send(outputs);
          done();
        },
        (err: unknown) => {
          node.status({ fill: 'red', shape: 'ring', text: t('retry-console.status.failed', { topic }) });
          done(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });

    // Every `every` seconds: the groups, the history and the state, as a `refresh` msg gives them. A
    // failure shows on the status and is logged once until it changes (not every few seconds).
    let lastProblem = '';
    const tick = (): void => {
      run('refresh', {}).then(
        (all) => {
          lastProblem = '';
          for (const outputs of all) node.send(outputs);
        },
        (err: unknown) => {
          const problem = err instanceof Error ? err.message : String(err);
          node.status({ fill: 'red', shape: 'ring', text: t('retry-console.status.failed', { topic: 'refresh' }) });
          if (problem !== lastProblem) node.warn(problem);
          lastProblem = problem;
        },
      );
    };
    const timer = every > 0 ? setInterval(tick, every * 1000) : undefined;
    const first = every > 0 ? setTimeout(tick, 1000) : undefined;
    node.on('close', () => {
      clearInterval(timer);
      clearTimeout(first);
    });
  }
  RED.nodes.registerType('retry-console', RetryConsole);
};
