/**
 * The end nodes' reply to the flow, the last step of the walk of one message (docs/architecture.md):
 * what a settle came to ends the msg's way — `done()`, a park sends the msg on with `msg.park` (the
 * park-publisher), the parks are counted on the node's status — and a settle that could not happen is
 * reported. A settle done at once is replied to by the end node; one done later (a confirmed copy, an
 * ack waiting for its key to be recorded) by the settles through {@link SettleReplies.later}: one
 * callback for all, no closure per settle. Shared by retry-settle and park-publisher.
 */
import type { ErrorKind } from '../../lib/classify';
import { SettleError, type SettleLater, type SettleOutcome } from '../../lib/settle';
import { statusKey, type Translate } from './i18n';
import { errorText, type DoneFunction, type Node, type NodeMessage, type NodeStatus, type SendFunction } from './node-red';
import { StatusUpdates } from './status';

/** The parks a node counted: how many, and the last one's attempt and whether it was of a permanent failure (error rules). */
export interface Parks {
  count: number;
  attempt: number;
  permanent: boolean;
}

interface Pending {
  msg: NodeMessage;
  send: SendFunction;
  done: DoneFunction;
  why: string;
  kind?: ErrorKind;
}

export class SettleReplies {
  private readonly parks: Parks = { count: 0, attempt: 0, permanent: false };
  private readonly status: StatusUpdates;
  /** The settles not done at once, by delivery id. */
  private readonly pending = new Map<string, Pending>();

  /**
   * @param parkedStatus the status of a node that parked (its own words)
   * @param sendsOn whether a park sends its msg on (the park-publisher's output)
   */
  constructor(
    private readonly node: Node,
    private readonly t: Translate,
    parkedStatus: (parks: Parks) => NodeStatus,
    private readonly sendsOn: boolean,
  ) {
    this.status = new StatusUpdates(
      () => (this.parks.count === 0 ? undefined : parkedStatus(this.parks)),
      (shown) => node.status(shown),
    );
  }

  /** What a settle done later came to (called from inside the gate or a confirm: nothing is thrown there). */
  readonly later: SettleLater = (result, deliveryId) => {
    const p = this.pending.get(deliveryId);
    if (!p) return;
    this.pending.delete(deliveryId);
    try {
      if (result instanceof Error) this.failed(result, p.done);
      else this.settled(result, p.msg, p.send, p.done, p.why, p.kind);
    } catch (err) {
      this.node.error(errorText(err));
    }
  };

  /** A settle that comes later, through {@link later} (never called before the settle returned). */
  wait(deliveryId: string, msg: NodeMessage, send: SendFunction, done: DoneFunction, why: string, kind?: ErrorKind): void {
    this.pending.set(deliveryId, { msg, send, done, why, kind });
  }

  /** A settle is done: counted on the status; a park sends its msg on, with where and why. */
  settled(outcome: SettleOutcome, msg: NodeMessage, send: SendFunction, done: DoneFunction, reason: string, kind?: ErrorKind): void {
    if (outcome.done === 'parked') this.parked(1, outcome.attempt, kind === 'permanent');
    if (this.sendsOn) {
      msg.park = { queue: outcome.parkedTo ?? '', reason: outcome.parkReason ?? reason, attempt: outcome.attempt };
      send(msg);
    }
    done();
  }

  /** `count` parks counted on the status (a batch's items at once), the last at `attempt`. */
  parked(count: number, attempt: number, permanent: boolean): void {
    const { parks } = this;
    const first = parks.count === 0;
    parks.count += count;
    parks.attempt = attempt;
    parks.permanent = permanent;
    if (first) this.status.now();
    else this.status.soon();
  }

  /**
   * A settle that could not happen. Already settled, or its channel gone: the broker redelivers it (or
   * already has): nothing lost, nothing for the flow to handle. Anything else (no delivery id, a failed
   * park) is for a Catch node.
   */
  failed(err: unknown, done: DoneFunction): void {
    this.status.forget();
    if (err instanceof SettleError && err.kind !== 'broker') {
      this.node.status({ fill: 'yellow', shape: 'ring', text: this.t(`retry-settle.status.${err.kind}`) });
      this.node.warn(err.message);
      done();
      return;
    }
    this.node.status({ fill: 'red', shape: 'ring', text: statusKey('retry-settle.status.failed') });
    done(err instanceof Error ? err : new Error(String(err)));
  }

  stop(): void {
    this.status.stop();
  }
}
