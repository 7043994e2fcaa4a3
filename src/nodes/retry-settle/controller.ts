/**
 * The retry-settle node's controller: a msg that came out of a retry consumer is acked (done) or
 * retried (dead-letter to the retry queue; parks once attempts are exhausted). A retry is first what
 * the configuration's error rules make of the failure: a permanent one parks at once, a done one is
 * acked. Step 4 of the walk of one message (docs/architecture.md).
 */
import type { Classification } from '../../lib/classify';
import type { SettleAction } from '../../lib/settle';
import { batchOf } from '../shared/batch-msg';
import { classifiedSettle } from '../shared/batch-plan';
import { BatchSettler } from '../shared/batch-settle';
import { deliveryTarget, targetFinder, type DeliveryTarget } from '../shared/consumer-sessions';
import { translator, type Translate } from '../shared/i18n';
import { errorText, type DoneFunction, type Node, type NodeAPI, type NodeDef, type NodeMessage, type SendFunction } from '../shared/node-red';
import { findConfig } from '../shared/config-lookup';
import { NODE_TYPE } from '../shared/node-types';
import type { RetryConfigNode } from '../shared/retry-config-node';
import { EndNode } from '../shared/settle-node';
import { SettleReplies } from '../shared/settle-reply';
import { RetrySettleBatches } from './batch';
import { msgAttempt, replacedRetry } from './msg-retry';
import { retrySettleSettings } from './properties';
import { flowDelay, Rarely, requestedDelay, ShortWaitWarnings } from './retry-delay';

export class RetrySettleController {
  private readonly action: SettleAction;
  private readonly reason: string;
  private readonly find: ReturnType<typeof targetFinder>;
  private readonly replies: SettleReplies;
  private readonly end: EndNode;
  private readonly shortWaits: ShortWaitWarnings;
  /** Says that msg.retry was replaced on the way (the first time, then once in every 1000). */
  private readonly replaced: Rarely;
  private readonly t: Translate;
  private readonly batches: RetrySettleBatches;

  constructor(
    private readonly RED: NodeAPI,
    node: Node,
    def: NodeDef,
  ) {
    const t = (this.t = translator(RED));
    const settings = retrySettleSettings(def);
    this.action = settings.action;
    this.reason = settings.reason;
    this.find = targetFinder(RED);
    // It says when a retry parked, having run out of attempts (or at once, a permanent failure).
    this.replies = new SettleReplies(
      node,
      t,
      (parks) => ({ fill: 'yellow', shape: 'dot', text: t(parks.permanent ? 'retry-settle.status.parkedPermanent' : 'retry-settle.status.parkedAfter', { attempt: parks.attempt }) }),
      false,
    );
    this.end = new EndNode(this.replies);
    this.shortWaits = new ShortWaitWarnings((text) => node.warn(text));
    this.replaced = new Rarely((text) => node.warn(text));
    this.batches = new RetrySettleBatches({
      action: this.action,
      reason: this.reason,
      bisect: settings.bisect,
      find: this.find,
      replies: this.replies,
      settler: new BatchSettler(this.find, this.replies, false),
      warn: (text) => node.warn(text),
      checkWait: (target, attempt, delayMs) => this.checkWait(target, attempt, delayMs),
    });
    node.on('input', (msg, send, done) => this.input(msg, send, done));
    node.on('close', () => this.replies.stop());
  }

  /** Ack settles as asked; a retry is what the configuration's error rules make of the failure. */
  private input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const batch = batchOf(msg);
    if (batch) return this.batches.input(batch, msg, send, done);
    const target = deliveryTarget(this.find, msg, this.action);
    if (target instanceof Error) return this.replies.failed(target, done);
    const reason = errorText(msg.error) || this.reason;
    if (this.action !== 'retry') return this.end.settle(target, msg, send, done, this.action, reason);
    const classifier = target.sessions.classifier;
    if (!classifier || classifier.size === 0) return this.retry(target, msg, send, done, reason, requestedDelay(msg));
    const apply = (c: Classification): void => {
      const s = classifiedSettle(c, reason, msg.error, flowDelay(msg));
      if (s.kind === 'transient') this.retry(target, msg, send, done, reason, s.delayMs);
      else this.end.settle(target, msg, send, done, s.action, s.reason, s.kind);
    };
    const classified = classifier.classify({ error: msg.error, statusCode: msg.statusCode, msg });
    if (classified instanceof Promise) classified.then(apply, (err: unknown) => this.replies.failed(err, done));
    else apply(classified);
  }

  /**
   * A transient failure: retried, after the wait it asked for (warned, rarely, when the configuration
   * cannot wait that long, or when msg.retry was replaced on the way: a msg.retry.delay set after that is lost).
   */
  private retry(target: DeliveryTarget, msg: NodeMessage, send: SendFunction, done: DoneFunction, reason: string, delayMs: number): void {
    const now = replacedRetry(msg);
    if (now !== undefined) this.replaced.say(() => this.t('retry-settle.warning.retryReplaced', { now }));
    this.checkWait(target, msgAttempt(msg) ?? 1, delayMs);
    this.end.settle(target, msg, send, done, 'retry', reason, 'transient', delayMs);
  }

  private checkWait(target: DeliveryTarget, attempt: number, delayMs: number): void {
    if (delayMs > 0) this.shortWaits.check(findConfig<RetryConfigNode>(this.RED, NODE_TYPE.retryConfig, target.config)?.topology, attempt, delayMs);
  }
}
