/**
 * `retry health`: any msg in, the package's health report out — `msg.payload` the report,
 * `msg.statusCode` 200 when ready, 503 when not — so a flow serves it at the path and behind the
 * authentication its probes need (`http in` → `retry health` → `http response`). The same report is
 * an admin endpoint, GET <admin root>/rabbitmq-retry/health (permission `rabbitmq-retry.read`),
 * registered once with the node type.
 */
import { healthReport, type HealthReport } from '../../lib/health';
import { translator } from '../shared/i18n';
import type { AdminResponse, Node, NodeAPI, NodeDef } from '../shared/node-red';
import { collectHealth } from './collect';
import { HEALTH_PATH, healthStatus, statusCodeOf } from './answer';

export = function register(RED: NodeAPI): void {
  const report = async (): Promise<HealthReport> => healthReport(await collectHealth(RED), Date.now());

  function RetryHealth(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const t = translator(RED);
    node.on('input', (msg, send, done) => {
      report().then(
        (answer) => {
          msg.payload = answer;
          msg.statusCode = statusCodeOf(answer);
          node.status(healthStatus(answer, t));
          send(msg);
          done();
        },
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      );
    });
  }
  RED.nodes.registerType('retry-health', RetryHealth);

  RED.httpAdmin.get(HEALTH_PATH, RED.auth.needsPermission('rabbitmq-retry.read'), (_req, res: AdminResponse) => {
    report().then(
      (answer) => res.status(statusCodeOf(answer)).json(answer),
      (err: unknown) => res.status(500).json({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
};
