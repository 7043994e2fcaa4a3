/**
 * What both end nodes (retry-settle, park-publisher) do to settle a msg's delivery, once they know
 * how: the session that issued its id settles it (`session.settles`, the walk's next step), and what
 * that came to goes to the node's reply (`settle-reply.ts`) — at once for an ack or a dead-letter,
 * later for a confirmed copy or an ack waiting for its key to be recorded. The walk of one message:
 * docs/architecture.md.
 */
import type { ErrorKind } from '../../lib/classify';
import { failureDetails } from '../../lib/message';
import type { SettleAction, SettleOutcome } from '../../lib/settle';
import type { DeliveryTarget } from './consumer-sessions';
import type { DoneFunction, NodeMessage, SendFunction } from './node-red';
import type { SettleReplies } from './settle-reply';

export class EndNode {
  constructor(private readonly replies: SettleReplies) {}

  /**
   * Settles as decided: `how` the action, `why` the reason, `kind` what the error rules made of it,
   * `delayMs` the wait a retry asked for (msg.retry.delay, Retry-After).
   */
  settle(target: DeliveryTarget, msg: NodeMessage, send: SendFunction, done: DoneFunction, how: SettleAction, why: string, kind?: ErrorKind, delayMs = 0): void {
    const { replies } = this;
    let outcome: SettleOutcome | undefined;
    try {
      outcome = target.session.settles.settleNow(target.deliveryId, how, why, how === 'ack' ? undefined : failureDetails(msg.error), kind, replies.later, delayMs);
    } catch (err) {
      replies.failed(err, done);
      return;
    }
    // An ack is mostly done here and now: the flow's done() follows without a promise or an extra turn.
    if (outcome !== undefined) replies.settled(outcome, msg, send, done, why, kind);
    else replies.wait(target.deliveryId, msg, send, done, why, kind); // `later` is never called before settleNow returns
  }
}
