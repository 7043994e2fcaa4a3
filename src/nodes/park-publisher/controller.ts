/**
 * The park-publisher node's controller: moves the message msg refers to into the parking queue — a
 * confirmed, mandatory publish of the original body, properties and headers plus failure headers, and
 * only then the ack — and sends the msg on with `msg.park`. Step 4 of the walk of one message, when it
 * parks (docs/architecture.md).
 */
import { batchOf, type BatchAmqp } from '../shared/batch-msg';
import { batchDirectives, BatchInputError } from '../shared/batch-outcomes';
import { planBatch, type ItemSettle } from '../shared/batch-plan';
import { BatchSettler } from '../shared/batch-settle';
import { deliveryTarget, targetFinder } from '../shared/consumer-sessions';
import { translator } from '../shared/i18n';
import { errorText, type DoneFunction, type Node, type NodeAPI, type NodeMessage, type SendFunction } from '../shared/node-red';
import { EndNode } from '../shared/settle-node';
import { SettleReplies } from '../shared/settle-reply';
import type { ParkPublisherProperties } from './properties';

export class ParkPublisherController {
  private readonly reason: string;
  private readonly find: ReturnType<typeof targetFinder>;
  private readonly replies: SettleReplies;
  private readonly end: EndNode;
  private readonly batches: BatchSettler;

  constructor(RED: NodeAPI, node: Node, props: ParkPublisherProperties) {
    const t = translator(RED);
    this.reason = props.reason;
    this.find = targetFinder(RED);
    // It counts its parks, and sends each parked msg on.
    this.replies = new SettleReplies(node, t, (parks) => ({ fill: 'yellow', shape: 'dot', text: t('park-publisher.status.parked', { count: parks.count }) }), true);
    this.end = new EndNode(this.replies);
    this.batches = new BatchSettler(this.find, this.replies, true);
    node.on('input', (msg, send, done) => this.input(msg, send, done));
    node.on('close', () => this.replies.stop());
  }

  private input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const batch = batchOf(msg);
    if (batch) return this.batch(batch, msg, send, done);
    const target = deliveryTarget(this.find, msg, 'park');
    if (target instanceof Error) return this.replies.failed(target, done);
    this.end.settle(target, msg, send, done, 'park', errorText(msg.error) || this.reason);
  }

  /**
   * A batch msg: every item parked (its `msg.errors` entry its reason), but those `msg.outcomes` names,
   * settled as named; the msg goes on once with `msg.park` listing the parked items.
   */
  private batch(batch: BatchAmqp, msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const directives = batchDirectives(batch.items.length, msg.outcomes, msg.errors);
    if (directives instanceof BatchInputError) return this.replies.failed(directives, done);
    const reason = errorText(msg.error) || this.reason;
    const park = (why: string, error: unknown): ItemSettle => ({ action: 'park', reason: why, error, delayMs: 0 });
    const plan = planBatch(directives, { reason, error: msg.error }, () => park(reason, msg.error), (_index, error) => park(errorText(error) || reason, error));
    // No error rules here: nothing to wait for.
    this.batches.settle(batch, plan as ItemSettle[], msg, send, done);
  }
}
