/**
 * "Node-RED alone": raw amqplib doing the same work as the batched raw contestant (the same msg, the
 * same batched settles), inside the same Node-RED runtime as the package, its msg taking the same
 * Node-RED hops as the package's flow, and no package node. Against the batched raw contestant it
 * measures what Node-RED takes; the package against it, what is left for the package's own code.
 *
 * - consume: amqplib callback → bench-source → bench-sink (one hop, as consumer → retry-settle), the
 *   sink hands the delivery to the settle function (acks batched as the package batches them);
 * - retry: bench-source → bench-route → bench-sink (two hops, as consumer → decision node →
 *   retry-settle);
 * - publish: a bench-call node fed with node.receive() does the raw confirm-channel publish and
 *   sends the msg on to a bench-sink after its confirm (as retry-publish → next node).
 *
 * Used by scenarios.ts (timed runs) and memory-child.ts (the memory split).
 */
import type { ConsumeMessage } from 'amqplib';
import { tab } from '../../test/helpers/flows';
import { connect, errorText, rawJsonPublisher } from './common';
import { batchedAcker, sameWorkMsg } from './raw-consumer.cjs';
import { benchHooks, getNode, loadFlow, unloadFlow, type FlowNode, type Msg } from './nodered';

type Stop = () => Promise<void>;

/** What the consumer does per delivery (`received`, optional) and at the sink with its msg (`settle`). */
export interface Settler {
  received?: () => void;
  settle: (m: ConsumeMessage, msg: Msg) => void;
}

interface RawChannel {
  ack(message: ConsumeMessage, allUpTo?: boolean): void;
  nack(message: ConsumeMessage, allUpTo?: boolean, requeue?: boolean): void;
}

/** Acks batched as the package batches them (raw-consumer.cjs's batchedAcker, as work 'msg-later-batched'). */
export function batchedAcks(ch: RawChannel): Settler {
  const batch = batchedAcker(ch);
  return { received: () => batch.received(), settle: (m) => batch.ack(m) };
}

const sink: FlowNode = { id: 'sink', type: 'bench-sink', z: 'flow', wires: [] };

/** source → sink (1 hop), or source → bench-route → sink (2 hops: both route outputs go to the sink). */
function consumeFlow(hops: 1 | 2): FlowNode[] {
  if (hops === 1) return [tab(), { id: 'src', type: 'bench-source', z: 'flow', wires: [['sink']] }, sink];
  return [tab(), { id: 'src', type: 'bench-source', z: 'flow', wires: [['route']] }, { id: 'route', type: 'bench-route', z: 'flow', outputs: 2, wires: [['sink'], ['sink']] }, sink];
}

/**
 * Loads the flow, then consumes `queue` raw: each delivery's msg (sameWorkMsg) is emitted by the
 * source; at the sink, the settler made for the channel settles it. The deliveries wait in a Map by msg.amqp.deliveryId, as a node keeps them (the msg
 * carries plain data only).
 */
export async function startThroughNodeRed({
  queue,
  prefetch,
  hops,
  settler,
}: {
  queue: string;
  prefetch: number;
  hops: 1 | 2;
  settler: (ch: RawChannel) => Settler;
}): Promise<Stop> {
  await loadFlow(consumeFlow(hops));
  const model = await connect(`bench Node-RED alone consumer (${hops} hop${hops > 1 ? 's' : ''})`);
  const stop = async (): Promise<void> => {
    benchHooks.onSink = undefined;
    await model.close().catch(() => undefined);
    await unloadFlow();
  };
  try {
    const source = getNode('src') as unknown as { emitMsg(msg: Msg): void };
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(prefetch);
    const { received, settle } = settler(ch);
    const held = new Map<string, ConsumeMessage>();
    benchHooks.onSink = (msg) => {
      const id = String(msg.amqp.deliveryId);
      const m = held.get(id);
      if (!m) return;
      held.delete(id);
      settle(m, msg);
    };
    await ch.consume(
      queue,
      (m) => {
        if (m === null) return;
        if (received) received();
        const msg = sameWorkMsg(m, queue, `raw:${m.fields.deliveryTag}`);
        held.set(msg.amqp.deliveryId, m);
        source.emitMsg(msg);
      },
      { noAck: false },
    );
    return stop;
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Loads bench-call → bench-sink with the call node doing rawPublish's work: the payload JSON-encoded,
 * a confirmed, mandatory, persistent publish to `queue` on a raw ConfirmChannel, the msg sent on after
 * its confirm. `returned()` counts the publishes the broker returned unroutable (rawPublish's check).
 */
export async function startNodeRedAlonePublisher(queue: string): Promise<{ node: string; returned: () => number; stop: Stop }> {
  await loadFlow([tab(), { id: 'call', type: 'bench-call', z: 'flow', wires: [['sink']] }, sink]);
  const model = await connect('bench Node-RED alone publisher');
  const stop = async (): Promise<void> => {
    benchHooks.onInput = undefined;
    await model.close().catch(() => undefined);
    await unloadFlow();
  };
  try {
    const publisher = await rawJsonPublisher(model, queue);
    benchHooks.onInput = (msg, send, done) => {
      publisher.publish(msg.payload, (err) => {
        if (err) {
          done(err instanceof Error ? err : new Error(errorText(err)));
          return;
        }
        send(msg);
        done();
      });
    };
    return { node: 'call', returned: () => publisher.returned(), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
