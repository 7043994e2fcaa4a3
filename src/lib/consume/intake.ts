/**
 * Where the broker's deliveries enter a consumer session (the consume callback of its channel, step 1
 * of the walk of one message: docs/architecture.md): one from a channel the session let go of
 * (paused, stopping, lost) is only noted on its acks, so the broker requeues it; the others pass the
 * rate limit when on (waiting unacked: no multiple ack covers them) and reach the deliveries with
 * their retry information. One per session, which owns it.
 */
import type { Channel, ConsumeMessage } from 'amqplib';
import { deliveryCountRetryInfo, retryInfo } from '../message';
import type { AckBatcher, OrderedHold } from '../settle';
import type { RetryTopologyConfig } from '../topology';
import type { Deliveries } from './deliveries';
import { Throttle } from './throttle';

type Delivery = { channel: Channel; acks: AckBatcher; message: ConsumeMessage };

export class Intake {
  private readonly throttle: Throttle<Delivery> | undefined;

  /**
   * @param current whether deliveries of `channel` are taken now (it is the session's channel and the session runs)
   * @param holding called when the rate limit starts holding deliveries back
   */
  constructor(
    private readonly topology: Pick<RetryTopologyConfig, 'mainQueue' | 'maxAttempts' | 'delayedRetry'>,
    rateLimit: number | undefined,
    private readonly deliveries: Deliveries,
    private readonly hold: OrderedHold | undefined,
    private readonly current: (channel: Channel) => boolean,
    holding?: () => void,
  ) {
    this.throttle = rateLimit ? new Throttle<Delivery>(rateLimit, (d) => this.deliver(d.channel, d.acks, d.message), undefined, holding) : undefined;
  }

  /** Deliveries the rate limit holds back now. */
  get held(): number {
    return this.throttle?.held ?? 0;
  }

  /** The consume callback of `channel`: the broker's deliveries arrive here; null (the broker cancelled the consumer) goes to `cancelled`. */
  consumer(channel: Channel, acks: AckBatcher, cancelled: (channel: Channel) => void): (message: ConsumeMessage | null) => void {
    return (message) => (message ? this.arrived(channel, acks, message) : cancelled(channel));
  }

  arrived(channel: Channel, acks: AckBatcher, message: ConsumeMessage): void {
    if (!this.current(channel)) return acks.arrived(message); // let go of (paused, stopping): the broker requeues it
    if (!this.throttle) return this.deliver(channel, acks, message);
    acks.arrived(message); // unsettled while it waits: no multiple ack covers it
    this.throttle.pass({ channel, acks, message });
  }

  /** The consumer stops taking messages: what the rate limit holds goes back to the queue. */
  requeue(): void {
    this.throttle?.requeue();
  }

  /** The channel goes: what the rate limit holds is forgotten (it goes back with the channel). */
  drop(): void {
    this.throttle?.drop();
  }

  private deliver(channel: Channel, acks: AckBatcher, message: ConsumeMessage): void {
    if (!this.current(channel)) return;
    const { headers } = message.properties;
    // Broker-native delayed retry: the message stays in the main queue, the broker counts its failures.
    const retry = this.topology.delayedRetry === 'broker' ? deliveryCountRetryInfo(headers, this.topology.maxAttempts) : retryInfo(headers, this.topology.mainQueue, this.topology.maxAttempts);
    this.deliveries.arrived(acks, message, this.hold ? this.hold.retryOf(message, retry) : retry, Date.now());
  }
}
