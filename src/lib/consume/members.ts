/**
 * The instances consuming one partitioned configuration, learnt from the broker itself, and the
 * partitions this one holds among them (`partition-share.ts`). No new service and nothing declared for
 * good: each instance binds an exclusive, server-named queue to the broker's built-in `amq.direct` with
 * the routing key `rabbitmq-retry.members.<main queue>` and publishes a heartbeat there every
 * `heartbeatMs`; an instance not heard from for `expireMs` is gone (killed), a stopping one says
 * goodbye. A newcomer's first heartbeat is answered at once, so it learns the others within a round
 * trip; its first share comes `settleMs` after it joined. When the broker refuses its queue or binding
 * the share is every partition: the single active consumer of each queue still gives each partition to
 * one consumer at a time, as before. A lost connection keeps the share until it meets the others again.
 */
import { EventEmitter } from 'node:events';
import type { Channel, ConsumeMessage } from 'amqplib';
import { closeChannel } from '../amqp';
import { MemberTable, ownPartitions } from './partition-share';
import type { SessionConnection } from './types';

export const MEMBERS_EXCHANGE = 'amq.direct';

export interface PartitionMembersOptions {
  connection: SessionConnection;
  mainQueue: string;
  partitions: number;
  /** This instance's id: unique per run (a restarted instance is a new member). */
  id: string;
  heartbeatMs?: number;
  expireMs?: number;
  settleMs?: number;
  now?: () => number;
}

export interface PartitionMembersEvents {
  /** The partitions this instance holds now (sorted), and how many instances are live. */
  share: [owned: number[], members: number];
  warning: [text: string];
}

interface Beat {
  id: string;
  bye?: boolean;
}

/** The routing key the instances of `mainQueue` meet on. */
export function membersRoutingKey(mainQueue: string): string {
  return `rabbitmq-retry.members.${mainQueue}`;
}

export class PartitionMembers extends EventEmitter<PartitionMembersEvents> {
  private readonly table: MemberTable;
  private readonly heartbeatMs: number;
  private readonly settleMs: number;
  private readonly now: () => number;
  private channel: Channel | undefined;
  private timer: NodeJS.Timeout | undefined;
  private settled = false;
  private stopped = false;
  private last = '';
  /** Paused by hand: not a member (the others take its partitions) until resumed. */
  private away = false;
  private joining = false;
  private readonly onConnected = (): void => void this.join();
  private readonly onDisconnected = (): void => this.lost();

  constructor(private readonly options: PartitionMembersOptions) {
    super();
    this.heartbeatMs = options.heartbeatMs ?? 1000;
    this.settleMs = options.settleMs ?? 1000;
    this.table = new MemberTable(options.expireMs ?? 3.5 * this.heartbeatMs);
    this.now = options.now ?? Date.now;
  }

  start(): void {
    const { connection } = this.options;
    connection.on('connected', this.onConnected);
    connection.on('disconnected', this.onDisconnected);
    this.timer = setInterval(() => this.tick(), this.heartbeatMs);
    this.timer.unref();
    if (connection.connection) void this.join();
  }

  /** Says goodbye (the others take this one's partitions at once) and leaves. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const { connection } = this.options;
    connection.off('connected', this.onConnected);
    connection.off('disconnected', this.onDisconnected);
    const channel = this.channel;
    this.channel = undefined;
    if (!channel) return;
    this.beat(channel, true);
    await closeChannel(channel);
  }

  /** Paused by hand: says goodbye and holds no partition (the others take them over), until back. */
  setAway(away: boolean): void {
    if (away === this.away) return;
    this.away = away;
    if (this.channel) this.beat(this.channel, away);
    this.reshare();
  }

  private async join(): Promise<void> {
    if (this.stopped || this.channel || this.joining) return;
    this.joining = true;
    try {
      const channel = await this.meet();
      if (this.stopped) return void closeChannel(channel);
      this.channel = channel;
      if (!this.away) this.beat(channel);
      setTimeout(() => {
        this.settled = true;
        this.reshare();
      }, this.settleMs).unref();
    } catch (err) {
      // Without a connection its `connected` joins again; else the broker refuses the queue or the binding.
      if (this.stopped || !this.options.connection.connection) return;
      this.emit('warning', `partitions not shared with the other instances (every partition consumed here, the broker's single active consumer decides): ${(err as Error).message}`);
      this.fallBack();
    } finally {
      this.joining = false;
    }
  }

  /** Its own queue on amq.direct under the main queue's key, consumed. */
  private async meet(): Promise<Channel> {
    const channel = await this.options.connection.createChannel();
    channel.on('close', () => this.channel === channel && this.lost());
    channel.on('error', () => undefined);
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false });
    await channel.bindQueue(queue, MEMBERS_EXCHANGE, membersRoutingKey(this.options.mainQueue));
    await channel.consume(queue, (message) => this.heard(message), { noAck: true });
    return channel;
  }

  /** Its channel is gone: the share stays as it was (the sessions are down too while the connection is) until it has met the others again. */
  private lost(): void {
    this.channel = undefined;
    this.settled = false;
    // The channel alone closed (the connection is up): join again; else the connection's `connected` does.
    if (!this.stopped && this.options.connection.connection) setTimeout(() => void this.join(), this.heartbeatMs).unref();
  }

  /** It cannot meet the others (the broker refuses its queue or binding): every partition here, the broker's single active consumer decides, as before. */
  private fallBack(): void {
    this.share(this.away ? [] : Array.from({ length: this.options.partitions }, (_, i) => i), this.away ? 0 : 1);
  }

  private heard(message: ConsumeMessage | null): void {
    if (!message || this.stopped) return;
    let beat: Beat;
    try {
      beat = JSON.parse(message.content.toString()) as Beat;
    } catch {
      return;
    }
    if (typeof beat.id !== 'string' || beat.id === this.options.id) return;
    if (beat.bye) this.table.left(beat.id);
    else if (this.table.heard(beat.id, this.now()) && this.channel && !this.away) this.beat(this.channel); // a newcomer learns of this one at once
    this.reshare();
  }

  private tick(): void {
    if (this.channel && !this.away) this.beat(this.channel);
    this.reshare();
  }

  private beat(channel: Channel, bye = false): void {
    const body: Beat = bye ? { id: this.options.id, bye } : { id: this.options.id };
    try {
      channel.publish(MEMBERS_EXCHANGE, membersRoutingKey(this.options.mainQueue), Buffer.from(JSON.stringify(body)));
    } catch {
      // the channel is closing: its close event says so
    }
  }

  private reshare(): void {
    if (!this.settled || !this.channel || this.stopped) return;
    const live = this.table.live(this.now());
    this.share(this.away ? [] : ownPartitions(this.options.id, live, this.options.partitions), live.length + (this.away ? 0 : 1));
  }

  private share(owned: number[], members: number): void {
    const key = `${owned.join(',')}/${members}`;
    if (key === this.last) return;
    this.last = key;
    this.emit('share', owned, members);
  }
}
