/**
 * A batch msg at a retry-settle: each item settled on its own (docs/nodes/retry-settle.md). Its
 * `msg.outcomes` entry as named, else its `msg.errors` entry as the configuration's error rules
 * classify it, else the node's action — ack, or a retry of the whole batch's `msg.error` classified
 * once. Everything is checked and classified before the first item is settled. With bisect on, a
 * batch that failed as a whole is split and its halves sent through its consumer again.
 */
import type { Classification, ErrorClassifier } from '../../lib/classify';
import type { SettleAction } from '../../lib/settle';
import type { BatchAmqp, BatchItem } from '../shared/batch-msg';
import { batchDirectives, BatchInputError } from '../shared/batch-outcomes';
import { classifiedSettle, planBatch, whenClassified, type ItemSettle, type Planned } from '../shared/batch-plan';
import type { BatchSettler } from '../shared/batch-settle';
import { consumerGone, type targetFinder, type DeliveryTarget } from '../shared/consumer-sessions';
import { errorText, type DoneFunction, type NodeMessage, type SendFunction } from '../shared/node-red';
import type { SettleReplies } from '../shared/settle-reply';
import { bisects, halves } from './bisect';

const TRANSIENT: Classification = { kind: 'transient' };

export interface BatchOptions {
  action: SettleAction;
  reason: string;
  bisect: boolean;
  find: ReturnType<typeof targetFinder>;
  replies: SettleReplies;
  settler: BatchSettler;
  warn: (text: string) => void;
  /** Warns, rarely, of a retry that waits less than it asked for (an item's attempt, its wait). */
  checkWait: (target: DeliveryTarget, attempt: number, delayMs: number) => void;
}

export class RetrySettleBatches {
  constructor(private readonly o: BatchOptions) {}

  input(batch: BatchAmqp, msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const { o } = this;
    if (batch.items.length === 0) return done();
    const first = (batch.items[0] as BatchItem).deliveryId;
    const target = o.find(batch.config, first);
    if (!target) return o.replies.failed(consumerGone(first), done);
    const directives = batchDirectives(batch.items.length, msg.outcomes, msg.errors);
    if (directives instanceof BatchInputError) return o.replies.failed(directives, done);
    const reason = errorText(msg.error) || o.reason;
    const classifier = rulesOf(target);
    // The whole batch's failure is classified once (a retry); each item's own error item by item.
    const whole = o.action === 'retry' && classifier ? classifier.classify({ error: msg.error, statusCode: msg.statusCode, msg }) : TRANSIENT;
    const go = (c: Classification): void => {
      if (o.action === 'retry' && o.bisect && bisects(msg, batch, c)) return this.bisect(target, batch, msg, send, done, reason);
      const planned = planBatch(
        directives,
        { reason, error: msg.error },
        () => (o.action === 'ack' ? { action: 'ack', reason, delayMs: 0 } : classifiedSettle(c, reason, msg.error, 0)),
        (index, error) => this.ofError(classifier, batch, msg, index, error),
      );
      if (planned instanceof Promise) planned.then((plan) => this.settle(target, batch, plan, msg, send, done), (err: unknown) => o.replies.failed(err, done));
      else this.settle(target, batch, planned, msg, send, done);
    };
    if (whole instanceof Promise) whole.then(go, (err: unknown) => o.replies.failed(err, done));
    else go(whole);
  }

  /** An item's own error, classified by the rules with the item as the msg (its payload, `amqp`, `retry`). */
  private ofError(classifier: ErrorClassifier | undefined, batch: BatchAmqp, msg: NodeMessage, index: number, error: unknown): Planned {
    const reason = errorText(error) || this.o.reason;
    const item = batch.items[index] as BatchItem;
    const statusCode = (error as { statusCode?: unknown }).statusCode;
    if (!classifier) return classifiedSettle(TRANSIENT, reason, error, 0);
    const subject: NodeMessage = { payload: Array.isArray(msg.payload) ? (msg.payload as unknown[])[index] : undefined, error, statusCode, amqp: item, retry: item.retry };
    return whenClassified(classifier.classify({ error, statusCode, msg: subject }), (c) => classifiedSettle(c, reason, error, 0));
  }

  private settle(target: DeliveryTarget, batch: BatchAmqp, plan: ItemSettle[], msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    plan.forEach(({ delayMs }, i) => {
      if (delayMs > 0) this.o.checkWait(target, (batch.items[i] as BatchItem).retry.attempt, delayMs);
    });
    this.o.settler.settle(batch, plan, msg, send, done);
  }

  /** Splits a batch that failed as a whole; without its consumer's resend (not in batch mode), retries it as a whole. */
  private bisect(target: DeliveryTarget, batch: BatchAmqp, msg: NodeMessage, send: SendFunction, done: DoneFunction, reason: string): void {
    const resend = target.sessions.resendOf(target.session);
    if (!resend) {
      this.o.warn(`batch ${batch.batch.id}: its consumer cannot send halves again (not in batch mode any more): the ${batch.items.length} items are retried as a whole`);
      const plan = batch.items.map((): ItemSettle => classifiedSettle(TRANSIENT, reason, msg.error, 0));
      return this.settle(target, batch, plan, msg, send, done);
    }
    for (const half of halves(msg, batch)) resend(half);
    done();
  }
}

/** The configuration's error rules, when it has any (none: every failure is transient). */
function rulesOf(target: DeliveryTarget): ErrorClassifier | undefined {
  const { classifier } = target.sessions;
  return classifier && classifier.size > 0 ? classifier : undefined;
}
