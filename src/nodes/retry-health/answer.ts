/** What a health probe answers, and the status the retry health node shows after one. */
import type { HealthReport } from '../../lib/health';
import { statusKey, type Translate } from '../shared/i18n';
import type { NodeStatus } from '../shared/node-red';

export const HEALTH_PATH = '/rabbitmq-retry/health';

/** What a probe answers: 200 when ready, 503 when not. */
export function statusCodeOf(report: HealthReport): number {
  return report.ready ? 200 : 503;
}

/** The node's status after a probe: the first problem (or warning) named. */
export function healthStatus(report: HealthReport, t: Translate): NodeStatus {
  const [problem] = report.problems;
  if (problem !== undefined) return { fill: 'red', shape: 'ring', text: t('retry-health.status.notReady', { problem }) };
  const [warning] = report.warnings;
  if (warning !== undefined) return { fill: 'yellow', shape: 'dot', text: t('retry-health.status.degraded', { warning }) };
  return { fill: 'green', shape: 'dot', text: statusKey('retry-health.status.ready') };
}
