/**
 * A consumer session's channel lost: closed under it, its connection gone, or its consumer cancelled by the broker (why:
 * `broker-cancel.ts`). What the flow holds is let go of (the broker redelivers it), said with what was in flight, and the
 * session sets up anew later. The session (`consumer-session.ts`) owns it and gives it the parts it needs.
 */
import type { Channel } from 'amqplib';
import { closeChannel } from '../amqp';
import { findCancelCause, type BrokerCancel } from './broker-cancel';
import type { ConsumerChannel } from './consumer-channel';
import type { Deliveries } from './deliveries';
import type { Drain } from './drain';
import type { Intake } from './intake';
import { lostChannelText } from './session-parts';
import type { ConsumerSessionOptions, SessionState } from './types';

/** What of its session the channel loss needs. */
export interface LossParts {
  own: ConsumerChannel;
  intake: Intake;
  deliveries: Deliveries;
  drain: Drain;
  options: ConsumerSessionOptions;
  stopped: () => boolean;
  warn: (text: string) => void;
  /** The session's state after the loss. */
  lost: (state: SessionState) => void;
  /** Sets up again later (the slow re-check). */
  setUpLater: () => void;
}

export class ChannelLoss {
  constructor(private readonly s: LossParts) {}

  /** The channel is gone (closed, connection lost, or `cancelled` by the broker: let go of already): set up anew later; `always`: said even with nothing in flight. */
  lostChannel(why: string, cancelled?: BrokerCancel, always = false): void {
    if (!cancelled) this.letGo(why, always);
    if (this.s.stopped()) return;
    this.s.lost({ phase: this.s.options.connection.connection ? 'channel-lost' : 'waiting-for-connection', detail: why, ...(cancelled ? { cancelled } : {}) });
    this.s.setUpLater();
  }

  /** Lets go of the channel: what the flow holds is stale (the broker redelivers it); said with the copies in flight. */
  private letGo(why: string, always = false): void {
    this.s.intake.drop();
    this.s.own.release();
    const gone = this.s.deliveries.endAll(`${why} before it was settled; the broker redelivers it`), { copying } = this.s.deliveries;
    if (always || gone > 0 || copying > 0) this.s.warn(lostChannelText(why, gone, copying));
    this.s.drain.changed();
  }

  /** basic.cancel: close the channel (unsettled go back), find why (`broker-cancel.ts`: queue deleted, consumer timeout, leader moved), say it, set up again. */
  cancelledByBroker(channel: Channel): void {
    if (this.s.own.channel !== channel) return;
    const { heldSince } = this.s.deliveries;
    this.letGo(`the broker cancelled the consumer of queue '${this.s.options.topology.mainQueue}'`);
    void closeChannel(channel);
    void findCancelCause(this.s.options, heldSince).then(({ cancelled, text }) => {
      if (this.s.stopped() || this.s.own.channel) return; // stopped, or set up again meanwhile (a reconnect)
      this.s.warn(text);
      this.lostChannel(text, cancelled);
    });
  }

  /** The channel closed under the consumer (`byBroker`: the broker closed it alone, said even with nothing in flight). */
  channelGone(channel: Channel, why: string, byBroker: boolean): void {
    if (this.s.own.channel === channel) this.lostChannel(why, undefined, byBroker);
  }
}
