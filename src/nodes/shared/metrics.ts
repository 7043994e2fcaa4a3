/**
 * The process's metrics and the package's Prometheus endpoint: GET <admin root>/rabbitmq-retry/metrics,
 * behind Node-RED's admin authentication (permission `rabbitmq-retry.read`: any user with `read` has it).
 * One RetryMetrics per Node-RED process, as a Prometheus client keeps one default registry: every node of
 * the package counts there and the one endpoint renders it. It only counts; nothing travels through it.
 */
import { RetryMetrics } from '../../lib/observe';
import type { NodeAPI } from './node-red';

export const METRICS_PATH = '/rabbitmq-retry/metrics';

export const metrics = new RetryMetrics();

export function registerMetricsEndpoint(RED: NodeAPI): void {
  RED.httpAdmin.get(METRICS_PATH, RED.auth.needsPermission('rabbitmq-retry.read'), (_req, res) => {
    res.set('Content-Type', 'text/plain; version=0.0.4; charset=utf-8').send(metrics.render());
  });
}
