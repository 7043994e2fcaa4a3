/**
 * `retry-settle`: the end of a wire that settles the message msg refers to — ack (done) or retry
 * (dead-letter to the retry queue; parks once attempts are exhausted). Like `http response` ends
 * what `http in` started.
 */
import type { SettleAction } from '../../lib/consumer-session';
import { reportSettleFailure } from '../shared/settle-report';
import { errorText, stringProp, type Node, type NodeAPI, type NodeDef } from '../shared/node-red';
import { settleMessage } from '../shared/retry-config-node';

export = function register(RED: NodeAPI): void {
  function RetrySettle(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const action: SettleAction = def.action === 'retry' ? 'retry' : 'ack';
    const configuredReason = stringProp(def.reason);
    node.on('input', (msg, _send, done) => {
      const reason = errorText(msg.error) || configuredReason;
      settleMessage(RED, msg, action, reason).then(
        (outcome) => {
          if (outcome.done === 'parked') node.status({ fill: 'yellow', shape: 'dot', text: `parked after attempt ${outcome.attempt}` });
          done();
        },
        (err: unknown) => reportSettleFailure(node, err, done),
      );
    });
  }
  RED.nodes.registerType('retry-settle', RetrySettle);
};
