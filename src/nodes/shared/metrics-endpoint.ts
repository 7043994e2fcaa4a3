/**
 * The package's Prometheus endpoint: GET <admin root>/rabbitmq-retry/metrics, behind Node-RED's admin
 * authentication (permission `rabbitmq-retry.read`: any user with `read` has it).
 */
import { retryMetrics } from '../../lib/observe/metrics';
import type { NodeAPI } from './node-red';

export const METRICS_PATH = '/rabbitmq-retry/metrics';

export function registerMetricsEndpoint(RED: NodeAPI): void {
  RED.httpAdmin.get(METRICS_PATH, RED.auth.needsPermission('rabbitmq-retry.read'), (_req, res) => {
    res.set('Content-Type', 'text/plain; version=0.0.4; charset=utf-8').send(retryMetrics.render());
  });
}
