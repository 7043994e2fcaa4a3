/**
 * What a consumer session reports, observed for the node: its deliveries' and settles' changes
 * (the status line, soon), warnings and errors (the node's log), the session's own states, parking
 * depth, kill switch and news, and the retry mover's warnings. Off the walk of one message
 * (docs/architecture.md): the settles (step 6) report forward to these observers, never back into
 * the step that sent the msg (consumer-part.ts, step 3).
 */
import type { ConsumerSession, RetryMover } from '../../lib/consume';
import type { ConsumerRecorder } from '../../lib/observe';
import type { Node } from '../shared/node-red';
import type { StatusUpdates } from '../shared/status';

export interface ObservedPart {
  node: Node;
  session: ConsumerSession;
  status: StatusUpdates;
  /** The node's history: the parking depth is sampled into it. */
  recorder: Pick<ConsumerRecorder, 'depth'>;
  /** Quorum retry tiers' mover, when the configuration has one. */
  mover: RetryMover | undefined;
}

/** Wires the session's reports to the node's status line and log (they end with the session's emitters). */
export function observePart({ node, session, status, recorder, mover }: ObservedPart): void {
  const { deliveries } = session;
  deliveries.on('changed', () => status.soon());
  deliveries.on('warning', (text) => node.warn(text));
  deliveries.on('error', (text) => node.error(text));
  session.on('parking', () => {
    status.soon();
    recorder.depth(session.queues.parking);
  });
  session.on('state', () => status.now());
  session.on('circuit', () => status.now());
  session.on('warning', (text) => node.warn(text));
  session.on('info', (text) => node.log(text)); // a recovery is good news: info, not a warning
  session.on('error', (text) => node.error(text));
  mover?.on('warning', (text) => node.warn(text));
}
