/**
 * Batch mode (issue 51): a consumer session's deliveries gathered into one msg per batch
 * (`lib/consume/batcher.ts` collects; this builds the msg and says when a partial batch goes). The
 * batch msg (src/nodes/shared/batch-msg.ts, docs/msg.md): `msg.payload` the items' payloads,
 * `msg.amqp.items[i]` each delivery's `msg.amqp` with its retry information and trace context; no
 * `msg.retry`, no `msg.amqp.deliveryId`. A partial batch goes at once when the consumer stops taking
 * messages (paused, kill switch open or probing, the rate limit holding deliveries back, stopping);
 * one whose channel is lost is dropped (the broker has its deliveries again), never sent stale.
 */
import { Batcher, type ConsumerSession } from '../../lib/consume';
import type { DeliveredMessage } from '../../lib/message';
import type { TraceHeaders } from '../../lib/trace';
import type { BatchAmqp, BatchItem } from '../shared/batch-msg';
import type { NodeMessage } from '../shared/node-red';

/**
 * The batch's item of one delivery: its own `msg.amqp` (its retry information included), with its
 * trace context written on. Not a copy: the delivery is not used once in its batch, and a copy was
 * one more object of a dozen fields per item, held as long as the batch is (memory of big batches).
 */
export function batchItem(delivered: DeliveredMessage): BatchItem {
  const item: BatchItem = delivered.amqp;
  if (delivered.traceparent !== undefined) {
    item.traceparent = delivered.traceparent;
    if (delivered.tracestate !== undefined) item.tracestate = delivered.tracestate;
  }
  return item;
}

/**
 * The msg of a batch of `queue`'s consumer in retry configuration `config`, under `id` (its `_msgid`, also
 * the batch's id); `trace`: the batch span's context (when the consumer records spans), as `msg.traceparent`.
 */
export function toBatchMsg(batch: DeliveredMessage[], id: string, config: string, queue: string, trace?: TraceHeaders): NodeMessage {
  const items = batch.map(batchItem);
  const amqp: BatchAmqp = { config, queue, batch: { id, size: items.length, split: 0 }, items };
  const msg: NodeMessage = { _msgid: id, payload: batch.map((d) => d.payload), amqp };
  if (trace !== undefined) {
    msg.traceparent = trace.traceparent;
    if (trace.tracestate !== undefined) msg.tracestate = trace.tracestate;
  }
  return msg;
}

export interface Batches {
  /** A delivery for the next batch. */
  add(delivered: DeliveredMessage): void;
  /** The consumer stops: the partial batch goes now (the flow can settle it while the consumer drains), and nothing more is watched. */
  stop(): void;
}

export interface BatchOptions {
  size: number;
  waitMs: number;
  /** The retry configuration's id and the main queue, on every batch msg. */
  config: string;
  queue: string;
}

/** Collects the session's deliveries into batch msgs, sent through `send` under ids from `nextId`. */
export function startBatches(session: ConsumerSession, options: BatchOptions, send: (msg: NodeMessage) => void, nextId: () => string): Batches {
  const batcher = new Batcher<DeliveredMessage>({
    size: options.size,
    waitMs: options.waitMs,
    send: (batch) => {
      // Its span (when the consumer records spans), linked to each item's.
      const trace = session.deliveries.traceBatch(batch);
      send(toBatchMsg(batch, nextId(), options.config, options.queue, trace));
    },
    // Ended meanwhile (its channel lost): the broker has it again.
    live: (delivered) => session.deliveries.live(delivered.amqp.deliveryId),
  });
  // Held only while the consumer takes messages at its full prefetch.
  const taking = (): boolean => session.state.phase === 'consuming' && session.circuit?.state !== 'probing';
  const onState = (): void => {
    const { phase } = session.state;
    if (phase === 'channel-lost' || phase === 'waiting-for-connection') batcher.drop();
    else if (!taking()) batcher.flush();
  };
  const onHolding = (): void => batcher.flush();
  // A delivery that arrives while the consumer takes none (sent by the broker before it saw the cancel) goes at
  // once too — looked at after the turn's frames: on resume the deliveries come before the state says consuming.
  let straggler: NodeJS.Immediate | undefined;
  const lookAgain = (): void => {
    straggler = undefined;
    if (!taking()) batcher.flush();
  };
  session.on('state', onState);
  session.on('holding', onHolding);
  return {
    add: (delivered) => {
      batcher.add(delivered);
      if (!taking()) straggler ??= setImmediate(lookAgain);
    },
    stop: () => {
      session.off('state', onState);
      session.off('holding', onHolding);
      clearImmediate(straggler);
      batcher.flush();
    },
  };
}
