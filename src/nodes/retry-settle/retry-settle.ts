/**
 * `retry-settle`: the end of a wire that settles the message msg refers to — ack (done) or retry
 * (dead-letter to the retry queue; parks once attempts are exhausted). Like `http response` ends
 * what `http in` started.
 */
import { translator } from '../shared/i18n';
import type { SettleAction } from '../../lib/settle/settlement';
import { errorText, stringProp, type Node, type NodeAPI, type NodeDef } from '../shared/node-red';
import { settleInput } from '../shared/settle';

export = function register(RED: NodeAPI): void {
  function RetrySettle(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const action: SettleAction = def.action === 'retry' ? 'retry' : 'ack';
    const configuredReason = stringProp(def.reason);
    node.on('input', (msg, _send, done) => {
      settleInput(RED, node, msg, action, errorText(msg.error) || configuredReason, done, (outcome) => {
        if (outcome.done === 'parked') node.status({ fill: 'yellow', shape: 'dot', text: translator(RED)('retry-settle.status.parkedAfter', { attempt: outcome.attempt }) });
      });
    });
  }
  RED.nodes.registerType('retry-settle', RetrySettle);
};
