/**
 * Settles a batch msg's items as planned (`batch-plan.ts`), each through the session that issued it
 * (`session.settles.settleNow`, one by one in one loop: the acks of one turn leave as one multiple ack),
 * and replies once for the batch: the flow's `done()` when every item's settle is done (a copy once
 * confirmed), the parks counted on the status, a park-publisher's msg sent on with `msg.park` listing
 * the parked items, and the items that could not be settled reported once, naming their indexes — a
 * warning when the broker has them again or they were settled before, an error for a Catch node else.
 */
import { failureDetails } from '../../lib/message';
import { SettleError, type SettleLater, type SettleOutcome } from '../../lib/settle';
import type { BatchAmqp, BatchItem } from './batch-msg';
import type { ItemSettle } from './batch-plan';
import { consumerGone, type DeliveryTarget, type targetFinder } from './consumer-sessions';
import type { DoneFunction, NodeMessage, SendFunction } from './node-red';
import type { SettleReplies } from './settle-reply';

/** One parked item, as `msg.park` lists it. */
export interface ParkedItem {
  index: number;
  queue: string;
  reason: string;
  attempt: number;
}

/** `1, 2, 5` — at most the first 20 indexes, then how many more. */
export function indexList(indexes: readonly number[]): string {
  const shown = indexes.slice(0, 20).join(', ');
  return indexes.length > 20 ? `${shown} and ${indexes.length - 20} more` : shown;
}

/** The items' failures as one: a warning (SettleError) when none is the broker's, else an error; undefined when none failed. */
export function batchFailure(batchId: string, failures: ReadonlyArray<{ index: number; err: unknown }>): Error | undefined {
  if (failures.length === 0) return undefined;
  const hard = failures.filter(({ err }) => !(err instanceof SettleError) || err.kind === 'broker');
  const worst = hard.length > 0 ? hard : failures;
  const first = (worst[0] as { err: unknown }).err;
  const noun = worst.length === 1 ? 'item' : 'items';
  const text = `batch ${batchId}: ${noun} ${indexList(worst.map((f) => f.index))} not settled: ${first instanceof Error ? first.message : String(first)}`;
  if (hard.length > 0) return new Error(text);
  return new SettleError(text, (first as SettleError).kind);
}

/** One batch being settled: what its items came to, until the last one's settle is done. */
class BatchRun {
  readonly parked: ParkedItem[] = [];
  readonly failures: Array<{ index: number; err: unknown }> = [];
  private readonly waiting = new Map<string, number>();
  private looped = false;
  private permanent = false;
  private lastAttempt = 0;

  constructor(
    private readonly batch: BatchAmqp,
    private readonly plan: readonly ItemSettle[],
    private readonly end: (run: BatchRun) => void,
  ) {}

  /** What an item's settle done later came to (one callback for the batch). */
  readonly later: SettleLater = (result, deliveryId) => {
    const index = this.waiting.get(deliveryId);
    if (index === undefined) return;
    this.waiting.delete(deliveryId);
    if (result instanceof Error) this.failed(index, result);
    else this.settled(index, result);
    this.endIfDone();
  };

  settled(index: number, outcome: SettleOutcome): void {
    if (outcome.done !== 'parked') return;
    const planned = this.plan[index] as ItemSettle;
    this.parked.push({ index, queue: outcome.parkedTo ?? '', reason: outcome.parkReason ?? planned.reason, attempt: outcome.attempt });
    this.lastAttempt = outcome.attempt;
    this.permanent = planned.kind === 'permanent';
  }

  failed(index: number, err: unknown): void {
    this.failures.push({ index, err });
  }

  wait(index: number): void {
    this.waiting.set((this.batch.items[index] as BatchItem).deliveryId, index);
  }

  /** Every item asked: ends now if none waits for a confirm. */
  loopEnded(): void {
    this.looped = true;
    this.endIfDone();
  }

  /** The last park's attempt and whether it was of a permanent failure (the status says it). */
  get lastPark(): { attempt: number; permanent: boolean } {
    return { attempt: this.lastAttempt, permanent: this.permanent };
  }

  private endIfDone(): void {
    if (this.looped && this.waiting.size === 0) this.end(this);
  }
}

export class BatchSettler {
  /**
   * @param replies the node's replies (its parks status, a failure's report)
   * @param sendsOn whether the batch msg goes on with `msg.park` once an item parked (park-publisher)
   */
  constructor(
    private readonly find: ReturnType<typeof targetFinder>,
    private readonly replies: SettleReplies,
    private readonly sendsOn: boolean,
  ) {}

  /**
   * Settles every item of `batch` as `plan` says (the plan checked and complete: one entry per item).
   * The items' session is looked up once (a batch is one consumer session's deliveries); an item it
   * did not issue is looked for on its own. Its settles run together: one `changed` for the batch.
   */
  settle(batch: BatchAmqp, plan: readonly ItemSettle[], msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const run = new BatchRun(batch, plan, (ended) => this.reply(batch, ended, msg, send, done));
    const { items } = batch;
    const first = items.length > 0 ? this.find(batch.config, (items[0] as BatchItem).deliveryId) : undefined;
    const loop = (): void => {
      for (let index = 0; index < items.length; index++) this.settleItem(batch.config, first?.session, items[index] as BatchItem, plan[index] as ItemSettle, index, run);
    };
    if (first) first.session.settles.together(loop);
    else loop();
    run.loopEnded();
  }

  /** One item, through `session` when it issued the item, else through the session that did. */
  private settleItem(config: string, session: DeliveryTarget['session'] | undefined, item: BatchItem, p: ItemSettle, index: number, run: BatchRun): void {
    const { deliveryId } = item;
    const settles = session?.settles.issued(deliveryId) ? session.settles : this.find(config, deliveryId)?.session.settles;
    if (settles === undefined) return run.failed(index, consumerGone(deliveryId));
    let outcome: SettleOutcome | undefined;
    try {
      outcome = settles.settleNow(deliveryId, p.action, p.reason, p.action === 'ack' ? undefined : failureDetails(p.error), p.kind, run.later, p.delayMs);
    } catch (err) {
      return run.failed(index, err);
    }
    if (outcome === undefined) run.wait(index);
    else run.settled(index, outcome);
  }

  private reply(batch: BatchAmqp, run: BatchRun, msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const { parked } = run;
    if (parked.length > 0) {
      parked.sort((a, b) => a.index - b.index);
      const { attempt, permanent } = run.lastPark;
      this.replies.parked(parked.length, attempt, permanent);
      if (this.sendsOn) {
        msg.park = parked;
        send(msg);
      }
    }
    const failure = batchFailure(batch.batch.id, run.failures.sort((a, b) => a.index - b.index));
    if (failure) this.replies.failed(failure, done);
    else done();
  }
}
