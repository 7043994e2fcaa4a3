/**
 * Bisect: a batch that failed as a whole, without saying which item broke it, is not settled but split
 * in two halves sent through its consumer again, each a batch msg of its own; the halves that succeed
 * are acked, the one that fails again is split again, so a bad item among 500 costs about 2·log2(500)
 * statements and only it ends settled as a single item's failure (docs/nodes/retry-settle.md). Pure.
 */
import type { Classification } from '../../lib/classify';
import type { BatchAmqp } from '../shared/batch-msg';
import type { NodeMessage } from '../shared/node-red';

/**
 * Whether a failed batch is split: a retry-settle in retry mode with bisect on, a batch of more than
 * one item, a `msg.error`, no per-item answer from the flow (`msg.outcomes`, `msg.errors`), and a
 * failure no transient rule matched (a database down retries every item: splitting would not help).
 */
export function bisects(msg: NodeMessage, batch: BatchAmqp, classification: Classification): boolean {
  if (batch.items.length < 2 || msg.error === undefined || msg.error === null) return false;
  if ((msg.outcomes !== undefined && msg.outcomes !== null) || (msg.errors !== undefined && msg.errors !== null)) return false;
  return !(classification.kind === 'transient' && classification.rule !== undefined);
}

/**
 * The two halves of a batch msg (the first the larger by one when the size is odd): the payload and
 * the items sliced alike, `split` one more, ids of their own (`<id>.1`, `<id>.2`); the rest of the msg
 * kept but its `error`, `statusCode` and `_msgid` (each half gets its own answer and a new msg id).
 */
export function halves(msg: NodeMessage, batch: BatchAmqp): [NodeMessage, NodeMessage] {
  const cut = Math.ceil(batch.items.length / 2);
  const payload = Array.isArray(msg.payload) ? msg.payload : [];
  const rest: NodeMessage = { ...msg };
  delete rest.error;
  delete rest.statusCode;
  delete rest._msgid;
  const half = (part: 1 | 2, from: number, to: number): NodeMessage => ({
    ...rest,
    payload: payload.slice(from, to),
    amqp: { ...batch, batch: { id: `${batch.batch.id}.${part}`, size: to - from, split: batch.batch.split + 1 }, items: batch.items.slice(from, to) },
  });
  return [half(1, 0, cut), half(2, cut, batch.items.length)];
}
