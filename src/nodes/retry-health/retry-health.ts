/**
 * `retry health`: any msg in, the package's health report out — `msg.payload` the report,
 * `msg.statusCode` 200 when ready, 503 when not — so a flow serves it at the path and behind the
 * authentication its probes need (`http in` → `retry health` → `http response`). The same report is
 * an admin endpoint, GET <admin root>/rabbitmq-retry/health (permission `rabbitmq-retry.read`),
 * registered once with the node type.
 *
 * The composition root: the report collected from the nodes that own each part (shared/health-collect.ts, which retry-console reads too), given
 * to each node's controller (controller.ts) and to the admin endpoint.
 */
import { healthReport, type HealthReport } from '../../lib/health';
import { translator } from '../shared/i18n';
import type { AdminResponse, Node, NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { HEALTH_PATH, statusCodeOf } from './answer';
import { collectHealth } from '../shared/health-collect';
import { HealthController } from './controller';

export = function register(RED: NodeAPI): void {
  const report = async (): Promise<HealthReport> => healthReport(await collectHealth(RED), Date.now());

  function RetryHealth(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    new HealthController(this, report, translator(RED));
  }
  RED.nodes.registerType(NODE_TYPE.retryHealth, RetryHealth);

  RED.httpAdmin.get(HEALTH_PATH, RED.auth.needsPermission('rabbitmq-retry.read'), (_req, res: AdminResponse) => {
    report().then(
      (answer) => res.status(statusCodeOf(answer)).json(answer),
      (err: unknown) => res.status(500).json({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
};
