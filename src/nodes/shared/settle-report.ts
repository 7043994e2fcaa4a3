/** How the end nodes report a settle that could not happen. */
import { SettleError } from '../../lib/consumer-session';
import type { DoneFunction, Node } from './node-red';

/**
 * A delivery that was already settled, or whose channel is gone, is a warning: the broker redelivers
 * it (or already has), so nothing is lost and the flow has nothing to handle. Anything else — no
 * delivery id, a failed park — is an error a Catch node can handle.
 */
export function reportSettleFailure(node: Node, err: unknown, done: DoneFunction): void {
  if (err instanceof SettleError && err.kind !== 'broker') {
    node.status({ fill: 'yellow', shape: 'ring', text: err.kind.replace('-', ' ') });
    node.warn(err.message);
    done();
    return;
  }
  node.status({ fill: 'red', shape: 'ring', text: 'failed' });
  done(err instanceof Error ? err : new Error(String(err)));
}
