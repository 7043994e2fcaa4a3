/**
 * How each item of a batch msg is settled, from what the flow said about it (`batch-outcomes.ts`):
 * an outcome as named, an error as the end node makes of it (retry-settle: the error rules; a
 * park-publisher: its park reason), the rest the node's action. Pure but for the classifier's promise
 * (a JSONata rule): the plan is complete before the first item is settled.
 */
import { permanentReason, type Classification, type ErrorKind } from '../../lib/classify';
import type { SettleAction } from '../../lib/settle';
import type { ItemDirective } from './batch-outcomes';
import { errorText } from './node-red';

/** One item's settle: what `session.settles.settleNow` is asked. */
export interface ItemSettle {
  action: SettleAction;
  reason: string;
  /** The failure, for the copy's failure headers (none for an ack). */
  error?: unknown;
  /** What the error rules made of the failure. */
  kind?: ErrorKind;
  /** The wait a retry asked for, in ms. */
  delayMs: number;
}

export type Planned = ItemSettle | Promise<ItemSettle>;

/**
 * A retry the error rules classified: done acks, permanent parks at once (as a retry of kind
 * permanent: its reason says which rule), transient retries after the longer of the flow's and the
 * rule's wait.
 */
export function classifiedSettle(c: Classification, reason: string, error: unknown, delayMs: number): ItemSettle {
  if (c.kind === 'done') return { action: 'ack', reason, kind: 'done', delayMs: 0 };
  if (c.kind === 'permanent') return { action: 'retry', reason: permanentReason(c.rule, reason), error, kind: 'permanent', delayMs: 0 };
  return { action: 'retry', reason, error, kind: 'transient', delayMs: Math.max(delayMs, c.delayMs ?? 0) };
}

/** Settles a `classifiedSettle` of what a classifier answered, now or once its promise (a JSONata rule) does. */
export function whenClassified(c: Classification | Promise<Classification>, settle: (c: Classification) => ItemSettle): Planned {
  return c instanceof Promise ? c.then(settle) : settle(c);
}

/** An outcome the flow named: settled as said, its reason its own, else its error's text, else `fallback`. */
export function outcomeSettle(d: Extract<ItemDirective, { from: 'outcome' }>, fallback: string, fallbackError: unknown): ItemSettle {
  const error = d.error ?? fallbackError;
  return { action: d.action, reason: d.reason ?? (errorText(d.error) || fallback), error, delayMs: d.delayMs };
}

/**
 * The plan of a whole batch: per item, its outcome as named, its error as `ofError` makes of it, the
 * rest `ofNode` (the node's action, the same for every item). A promise only when one item's is.
 */
export function planBatch(
  directives: readonly ItemDirective[],
  fallback: { reason: string; error: unknown },
  ofNode: () => Planned,
  ofError: (index: number, error: unknown) => Planned,
): ItemSettle[] | Promise<ItemSettle[]> {
  let node: Planned | undefined;
  let waits = false;
  const plan = directives.map((d, index): Planned => {
    let p: Planned;
    if (d.from === 'outcome') p = outcomeSettle(d, fallback.reason, fallback.error);
    else if (d.from === 'error') p = ofError(index, d.error);
    else p = node ??= ofNode(); // the node's action is worked out once for the batch (a whole-batch error classified once)
    if (p instanceof Promise) waits = true;
    return p;
  });
  return waits ? Promise.all(plan.map((p) => Promise.resolve(p))) : (plan as ItemSettle[]);
}
