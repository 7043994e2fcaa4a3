/**
 * A running retry health node: answers whatever arrives with the package's health report
 * (`msg.payload`, `msg.statusCode` 200 when ready, 503 when not) and shows it on its status. It holds
 * nothing between msgs: no listener or timer to remove on close.
 */
import type { HealthReport } from '../../lib/health';
import type { Translate } from '../shared/i18n';
import type { DoneFunction, Node, NodeMessage, SendFunction } from '../shared/node-red';
import { healthStatus, statusCodeOf } from './answer';

export class HealthController {
  constructor(
    private readonly node: Node,
    private readonly report: () => Promise<HealthReport>,
    private readonly t: Translate,
  ) {
    node.on('input', (msg, send, done) => this.input(msg, send, done));
  }

  private input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    this.report().then(
      (answer) => {
        msg.payload = answer;
        msg.statusCode = statusCodeOf(answer);
        this.node.status(healthStatus(answer, this.t));
        send(msg);
        done();
      },
      (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
    );
  }
}
