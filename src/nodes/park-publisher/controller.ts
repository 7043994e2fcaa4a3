/**
 * The park-publisher node's controller: moves the message msg refers to into the parking queue — a
 * confirmed, mandatory publish of the original body, properties and headers plus failure headers, and
 * only then the ack — and sends the msg on with `msg.park`. Step 4 of the walk of one message, when it
 * parks (docs/architecture.md).
 */
import { deliveryTarget, targetFinder } from '../shared/consumer-sessions';
import { translator } from '../shared/i18n';
import { errorText, stringProp, type DoneFunction, type Node, type NodeAPI, type NodeDef, type NodeMessage, type SendFunction } from '../shared/node-red';
import { EndNode } from '../shared/settle-node';
import { SettleReplies } from '../shared/settle-reply';

export class ParkPublisherController {
  private readonly reason: string;
  private readonly find: ReturnType<typeof targetFinder>;
  private readonly replies: SettleReplies;
  private readonly end: EndNode;

  constructor(RED: NodeAPI, node: Node, def: NodeDef) {
    const t = translator(RED);
    this.reason = stringProp(def.reason);
    this.find = targetFinder(RED);
    // It counts its parks, and sends each parked msg on.
    this.replies = new SettleReplies(node, t, (parks) => ({ fill: 'yellow', shape: 'dot', text: t('park-publisher.status.parked', { count: parks.count }) }), true);
    this.end = new EndNode(this.replies);
    node.on('input', (msg, send, done) => this.input(msg, send, done));
    node.on('close', () => this.replies.stop());
  }

  private input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const target = deliveryTarget(this.find, msg, 'park');
    if (target instanceof Error) return this.replies.failed(target, done);
    this.end.settle(target, msg, send, done, 'park', errorText(msg.error) || this.reason);
  }
}
