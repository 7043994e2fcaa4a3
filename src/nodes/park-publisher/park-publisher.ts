/**
 * `park-publisher`: moves the message msg refers to into the parking queue — a confirmed, mandatory
 * publish of the original body, properties and headers plus failure headers, and only then the ack.
 */
import { translator } from '../shared/i18n';
import { errorText, stringProp, type Node, type NodeAPI, type NodeDef } from '../shared/node-red';
import { settleInput } from '../shared/settle';

/** The parked count on the status is updated at most this often: a status per message costs Node-RED a comms event. */
const STATUS_INTERVAL_MS = 500;

export = function register(RED: NodeAPI): void {
  function ParkPublisher(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const configuredReason = stringProp(def.reason);
    let parked = 0;
    let statusTimer: NodeJS.Timeout | undefined;
    const showStatus = (): void => {
      statusTimer = undefined;
      node.status({ fill: 'yellow', shape: 'dot', text: translator(RED)('park-publisher.status.parked', { count: parked }) });
    };
    node.on('close', () => clearTimeout(statusTimer));
    node.on('input', (msg, send, done) => {
      const reason = errorText(msg.error) || configuredReason || 'parked by flow';
      settleInput(RED, node, msg, 'park', reason, done, (outcome) => {
        parked += 1;
        // The first park shows at once; later counts at most every STATUS_INTERVAL_MS.
        if (parked === 1) showStatus();
        else statusTimer ??= setTimeout(showStatus, STATUS_INTERVAL_MS);
        msg.park = { queue: outcome.parkedTo ?? '', reason: outcome.parkReason ?? reason, attempt: outcome.attempt };
        send(msg);
      });
    });
  }
  RED.nodes.registerType('park-publisher', ParkPublisher);
};
