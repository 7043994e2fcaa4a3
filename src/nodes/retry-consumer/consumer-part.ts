/**
 * One consumer session of a retry-consumer node, wired to the node: the main queue of a plain
 * configuration, or one partition queue of a partitioned one. Its msgs (step 3 of the walk of one
 * message, docs/architecture.md: it listens only to what its deliveries hand on, `message` and
 * `invalid`), metrics gauges and retry mover; what the session and its settles report goes to its
 * observers (consumer-observers.ts: status, warnings) and its events output (consumer-events.ts);
 * the node owns the status line over all of its parts.
 */
import { moverTiers, RetryMover, type ConsumerSession, type StopOptions } from '../../lib/consume';
import type { DeliveredMessage } from '../../lib/message';
import type { RetryTopologyConfig } from '../../lib/topology';
import type { Translate } from '../shared/i18n';
import type { ConsumerRecorder } from '../../lib/observe';
import { metrics } from '../shared/metrics';
import type { Node, NodeMessage } from '../shared/node-red';
import type { RetryConfigNode } from '../shared/retry-config-node';
import type { StatusUpdates } from '../shared/status';
import { startBatches } from './batches';
import { startEvents } from './consumer-events';
import { observePart } from './consumer-observers';
import { hasChannel, sessionStatus, type StatusContext } from './consumer-status';
import type { PartitionView } from './partition-status';

export interface PartOptions {
  node: Node;
  config: RetryConfigNode;
  session: ConsumerSession;
  topology: RetryTopologyConfig;
  /** The partition's number, in a partitioned configuration (`toMsg` puts it on every msg as `msg.amqp.partition`). */
  partition?: number;
  status: StatusUpdates;
  /** The node's history (and counters): the parking depth is sampled into it. */
  recorder: Pick<ConsumerRecorder, 'depth'>;
  toMsg: (delivered: DeliveredMessage) => NodeMessage;
  /** Batch mode: deliveries per msg and the wait of a partial batch, with the ids of its msgs. Undefined: one msg per delivery. */
  batch?: { size: number; waitMs: number; nextId: () => string };
  /** The events output's stats period; undefined: no events output. */
  statsEveryMs: number | undefined;
  circuit: boolean;
}

export interface ConsumerPart {
  session: ConsumerSession;
  /** Its state for a partitioned status line. */
  view(t: Translate, context: StatusContext): PartitionView;
  stop(options: StopOptions): Promise<void>;
}

export function startPart(options: PartOptions): ConsumerPart {
  const { node, config, session, topology, partition, status, toMsg, batch } = options;
  const connection = config.broker?.connection;
  // Batch mode: one msg per batch; bisect's halves (retry-settle) go out of the first output again.
  const batches = batch ? startBatches(session, { ...batch, config: config.id, queue: topology.mainQueue }, (msg) => node.send(msg), batch.nextId) : undefined;
  // The configuration owns its sessions: end nodes reach this one through it, until it has stopped and drained.
  const leave = config.consumers.add(session, node.id, batches && ((msg) => node.send(msg)));
  const deliveries = session.deliveries;
  deliveries.on('message', (delivered) => (batches ? batches.add(delivered) : node.send(toMsg(delivered))));
  deliveries.on('invalid', (delivered, why) => {
    const msg = toMsg(delivered);
    msg.error = { message: why };
    node.error(`message ${delivered.amqp.deliveryId}: ${why}`, msg);
  });
  // Quorum retry tiers: retries come back through the package, with confirms (see lib/consume/retry-mover.ts).
  const tiers = moverTiers(topology);
  const mover = tiers.length > 0 && connection ? new RetryMover({ connection, mainQueue: topology.mainQueue, tiers }) : undefined;
  // Once the topology is in place: the tier queues exist then.
  if (mover) {
    session.on('state', (state) => {
      if (hasChannel(state)) mover.start();
    });
  }
  // What the session and its settles report (status, warnings, errors) goes to the part's observers, off the walk.
  observePart({ node, session, status, recorder: options.recorder, mover });
  const { mainQueue, parkingQueue } = topology;
  const removeGauges = metrics.addConsumer({
    queue: mainQueue,
    parkingQueue,
    inFlight: () => deliveries.inFlight,
    depths: () => session.queues.depths,
    ...(options.circuit ? { consumer: node.id, circuit: () => session.circuit?.state } : {}),
  });
  const send = (msg: NodeMessage): void => node.send([null, msg]);
  const stopEvents = options.statsEveryMs !== undefined ? startEvents(session, config.consumers, mainQueue, options.statsEveryMs, send, (partition ?? 0) === 0) : undefined;
  session.start();
  return {
    session,
    view: (t, context) => ({ index: partition ?? 0, state: session.state, stats: session.stats, status: sessionStatus(session.state, session.stats, t, context) }),
    stop: (stopOptions) => {
      batches?.stop(); // before the drain: the flow can settle the partial batch
      stopEvents?.();
      removeGauges();
      return Promise.all([session.stop(stopOptions), mover?.stop()])
        .then(() => undefined)
        .finally(leave);
    },
  };
}
