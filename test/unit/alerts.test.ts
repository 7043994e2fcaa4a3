/**
 * The Grafana dashboard and the Prometheus alert rules in docs/ read only what the package exports:
 * every metric, label and label value they name is in the package's own rendered metrics (a
 * RetryMetrics with every kind of gauge registered, not a copied list), every expression is
 * structurally sound, and every alert has its severity, words and a runbook section that exists.
 * promtool checks the rules too where it is installed (apt: prometheus).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { load } from 'js-yaml';
import { RetryMetrics } from '../../src/lib/observe/metrics';
import { anchorsOf } from '../helpers/markdown-links';
import { skipBecause } from '../helpers/skips';
import { checkExpression, exportedSeries, tokenize, type Exported } from '../helpers/promql';

const ROOT = path.resolve(__dirname, '../..');
const RULES = path.join(ROOT, 'docs/prometheus/rabbitmq-retry-alerts.yml');
const DASHBOARD = path.join(ROOT, 'docs/grafana/rabbitmq-retry-dashboard.json');

/** Everything the package can export: one of each kind of counter, gauge and label value. */
function exported(): Exported {
  const metrics = new RetryMetrics();
  const counters = metrics.counters('orders');
  for (const kind of ['none', 'transient', 'permanent', 'done'] as const) for (const outcome of ['acked', 'retried', 'parked', 'duplicate'] as const) counters.record(outcome, 1, kind);
  metrics.replayed('orders');
  for (const state of ['closed', 'open', 'probing'] as const) {
    metrics.addConsumer({ queue: `orders-${state}`, parkingQueue: 'orders.parking', consumer: 'n1', circuit: () => state, inFlight: () => 1, depths: () => ({ main: 1, retry: { 'orders.retry': 1 }, parking: 1 }) });
  }
  metrics.addBroker({ id: 'b1', broker: 'amqp://mq', buffer: () => ({ messages: 1, bytes: 1, blocked: false }) });
  metrics.addOutbox({ id: 'o1', table: 'outbox', stats: () => ({ sent: 1, retried: 1, failed: 1 }), rows: () => ({ pending: 1, failed: 1 }) });
  return exportedSeries(metrics.render());
}

interface Rule {
  alert?: unknown;
  expr?: unknown;
  for?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

function rules(): Rule[] {
  const file = load(readFileSync(RULES, 'utf8')) as { groups?: Array<{ name?: unknown; rules?: Rule[] }> };
  assert.ok(Array.isArray(file.groups) && file.groups.length > 0, 'a rules file has groups');
  return file.groups.flatMap((group) => {
    assert.equal(typeof group.name, 'string');
    return group.rules ?? [];
  });
}

/** Every PromQL expression of the dashboard: its panels' targets and its template variables' queries. */
function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }>; templating: { list: Array<{ type: string; definition?: string }> } };
  const targets = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
  // label_values(metric, label) is Grafana's, not PromQL: its metric and label are checked as a selector.
  const variables = dashboard.templating.list
    .filter((v) => v.type === 'query')
    .map((v) => {
      const m = /^label_values\((\w+),\s*(\w+)\)$/.exec(v.definition ?? '');
      assert.ok(m, `a label_values(metric, label) query: ${v.definition}`);
      return `${m[1]}{${m[2]}!=""}`;
    });
  return [...targets, ...variables];
}

describe('alert rules and the Grafana dashboard (docs/)', function () {
  const series = exported();

  it('finds what the package exports from its own render', function () {
    // The list comes from the code: a metric added to metrics.ts is known here without a change.
    for (const name of ['messaging_client_consumed_messages_total', 'messaging_process_duration_seconds_bucket', 'rabbitmq_retry_parking_messages', 'rabbitmq_retry_circuit_state', 'rabbitmq_retry_outbox_rows']) {
      assert.ok(series.has(name), name);
    }
    assert.deepEqual([...(series.get('rabbitmq_retry_circuit_state')?.get('state') ?? [])].sort(), ['closed', 'open', 'probing']);
  });

  it('rejects what is not sound: an unknown metric, label, value or function, unbalanced brackets', function () {
    const bad: Array<[string, RegExp]> = [
      ['rabbitmq_retry_parked_messages > 0', /metric 'rabbitmq_retry_parked_messages' is not one the package exports/],
      ['rabbitmq_retry_parking_messages{queue_name="x"} > 0', /has no label 'queue_name'/],
      ['rabbitmq_retry_circuit_state{state="opened"} == 1', /never has state="opened"/],
      ['rabbitmq_retry_circuit_state{state=~"open|half"} == 1', /never has state="half"/],
      ['rates(messaging_client_consumed_messages_total[5m])', /unknown function 'rates'/],
      ['sum by (queue) (rate(messaging_client_consumed_messages_total[5m])', /not closed/],
      ['max(rabbitmq_retry_parking_messages]', /closes '\('/],
      ['sum by (queue_name) (rabbitmq_retry_parking_messages)', /label 'queue_name' \(in a label list\)/],
    ];
    for (const [expr, error] of bad) assert.throws(() => checkExpression(expr, series), error, expr);
    assert.deepEqual(checkExpression('sum by (queue) (rate(messaging_client_consumed_messages_total{outcome=~"acked|parked"}[$__rate_interval])) > 0 unless on (queue) up == 0', series), [
      'messaging_client_consumed_messages_total',
      'up',
    ]);
    assert.deepEqual(
      tokenize('x[5m] > 1e3').map((t) => t.kind),
      ['ident', 'open', 'duration', 'close', 'op', 'number'],
    );
  });

  it('the alert rules: each reads exported metrics only, waits (for:), has a severity, words and a runbook section', function () {
    const all = rules();
    const names = all.map((rule) => rule.alert);
    for (const wanted of ['RabbitMQRetryParkingNotEmpty', 'RabbitMQRetryParkedRateHigh', 'RabbitMQRetryKillSwitchOpen', 'RabbitMQRetryConsumerNotConsuming']) assert.ok(names.includes(wanted), wanted);
    assert.equal(new Set(names).size, names.length, 'alert names are unique');
    const anchors = anchorsOf(path.join(ROOT, 'docs/operations.md'));
    for (const rule of all) {
      const at = String(rule.alert);
      assert.equal(typeof rule.expr, 'string', at);
      assert.ok(checkExpression(rule.expr as string, series).length > 0, `${at} reads a metric`);
      assert.match(String(rule.for), /^\d+[smh]$/, `${at} waits before it fires`);
      assert.ok(['warning', 'critical'].includes(String(rule.labels?.severity)), `${at} severity`);
      for (const key of ['summary', 'description', 'runbook_url']) assert.equal(typeof rule.annotations?.[key], 'string', `${at} ${key}`);
      const runbook = /^docs\/operations\.md#([\w-]+)$/.exec(String(rule.annotations?.runbook_url));
      assert.ok(runbook && anchors.has(runbook[1] ?? ''), `${at}: its runbook ${String(rule.annotations?.runbook_url)} is a section of docs/operations.md`);
    }
  });

  it('the Grafana dashboard: every panel query reads exported metrics only, with the datasource as a variable', function () {
    const expressions = dashboardExpressions();
    assert.ok(expressions.length >= 10, 'the dashboard has its panels');
    const read = new Set(expressions.flatMap((expr) => checkExpression(expr, series)));
    for (const name of ['messaging_client_consumed_messages_total', 'rabbitmq_retry_parking_messages', 'rabbitmq_retry_circuit_state', 'rabbitmq_retry_in_flight_messages', 'rabbitmq_retry_outbox_rows']) assert.ok(read.has(name), `a panel shows ${name}`);
    const text = readFileSync(DASHBOARD, 'utf8');
    assert.ok(!/"uid":\s*"(?!\$\{datasource\}|rabbitmq-retry")/.test(text), 'no datasource uid of one installation');
  });

  it('promtool accepts the rules, where it is installed', function () {
    const version = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
    if (version.error) skipBecause(this, 'promtool is not installed (Debian / Ubuntu: apt-get install prometheus)');
    const check = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
  });
});
