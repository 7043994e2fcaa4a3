/**
 * One AMQP connection per broker configuration, shared by every node that uses it.
 * Connects when the first user arrives, closes when the last one leaves, and reconnects with capped
 * exponential backoff in between. Users listen for `connected` to (re)build their channels.
 * With several targets (the nodes of a cluster) it connects to the first that answers and, when that
 * connection is lost, goes on with the next one at once (round-robin); backoff only after a full round.
 */
import { EventEmitter } from 'node:events';
import type { Channel, ChannelModel } from 'amqplib';
import { backoffDelay, type BackoffOptions } from '../backoff';
import { closeChannel } from '../amqp';
import { Waiters } from './waiters';
import { type Publisher, type PublisherOptions, Publishers, type PublishLimits } from '../publish';
import { describeConnectionError } from './errors';
import { dialRound } from './dial';
import { resolveConnectTargets, type ConnectTarget } from './settings';

/** `invalid`: the configuration cannot work (bad URL, unusable TLS settings); nothing is tried. */
export type ConnectionPhase = 'idle' | 'connecting' | 'connected' | 'waiting' | 'closed' | 'invalid';

export interface ConnectionState {
  phase: ConnectionPhase;
  /** Last connection error, when there was one. */
  error?: string;
  /** While `waiting`: ms until the next attempt. */
  retryInMs?: number;
  /** While `connected`: the broker's `host:port`. */
  address?: string;
}

export interface BrokerConnectionOptions {
  /** Brokers to try, in order: one, or the nodes of a cluster (see resolveConnectTargets)... */
  targets?: ConnectTarget[];
  /** ...or one AMQP URL, or several separated by commas. */
  url?: string;
  /** Why the configuration cannot work; when set the connection never tries and says this instead. */
  configError?: string;
  /** Passed to amqplib's connect: TLS options (ca, cert, key, passphrase, servername, rejectUnauthorized). */
  socketOptions?: Record<string, unknown>;
  /** Shown in the broker's management UI for this connection. */
  connectionName: string;
  reconnect: BackoffOptions;
  /** How much may wait to be published while the broker blocks or is unreachable. */
  publishLimits?: PublishLimits;
}

export interface BrokerConnectionEvents {
  state: [ConnectionState];
  connected: [ChannelModel];
  disconnected: [Error | undefined];
  /**
   * close() was called: last chance to write what is pending (a consumer's batched acks); the close
   * frame waits two turns for amqplib to send them.
   */
  closing: [];
}

export class BrokerConnection extends EventEmitter<BrokerConnectionEvents> {
  private model: ChannelModel | undefined;
  private readonly users = new Set<string>();
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  /** Confirm channels per purpose and the buffer where publishes wait under back-pressure. */
  readonly publishers: Publishers;
  private current: ConnectionState;
  private readonly targets: ConnectTarget[];
  private readonly configError: string | undefined;
  /** Index of the target the next connect starts with. */
  private next = 0;
  /** whenConnected() calls waiting for a connection. */
  private readonly waiters = new Waiters<ChannelModel>();
  /** When the connection last came up or went down (ms since epoch). */
  private changedAt = Date.now();
  /** While waiting: when the next attempt is due (ms since epoch). */
  private nextAttempt: number | undefined;

  constructor(private readonly options: BrokerConnectionOptions) {
    super();
    // Every consumer session and user node of this broker listens here: dozens are normal, not a leak.
    this.setMaxListeners(0);
    let targets = options.targets ?? [];
    let configError = options.configError;
    if (!options.targets && !configError) {
      try {
        targets = resolveConnectTargets({ url: options.url ?? '', host: '', port: 0, vhost: '/', tls: false, heartbeat: -1 });
      } catch (err) {
        configError = (err as Error).message;
      }
    }
    this.targets = targets;
    this.configError = configError;
    this.current = this.restingState();
    const unused = 'not connected to the broker (no node uses this broker configuration)';
    this.publishers = new Publishers(
      () => (this.current.phase === 'invalid' ? this.current.error : this.current.phase === 'idle' || this.current.phase === 'closed' ? unused : undefined),
      options.publishLimits,
    );
  }

  private restingState(phase: 'idle' | 'closed' = 'idle'): ConnectionState {
    return this.configError ? { phase: 'invalid', error: this.configError } : { phase };
  }

  get state(): ConnectionState {
    return this.current;
  }

  get connection(): ChannelModel | undefined {
    return this.model;
  }

  /** When the connection last came up or went down (ms since epoch): connected since, or not connected since. */
  get since(): number {
    return this.changedAt;
  }

  /** While waiting to reconnect: when the next attempt is due (ms since epoch). */
  get nextAttemptAt(): number | undefined {
    return this.current.phase === 'waiting' ? this.nextAttempt : undefined;
  }

  get userCount(): number {
    return this.users.size;
  }

  /** Registers a user; the first one opens the connection. */
  acquire(userId: string): void {
    this.users.add(userId);
    if (this.users.size === 1 && (this.current.phase === 'idle' || this.current.phase === 'closed')) {
      this.stopping = false;
      this.attempt = 0;
      void this.connect();
    }
  }

  /** Deregisters a user; the last one closes the connection. */
  async release(userId: string): Promise<void> {
    this.users.delete(userId);
    if (this.users.size === 0) await this.close();
  }

  /** Closes the connection and stops reconnecting, whoever still uses it. */
  async close(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.waiters.wake({ error: new Error('the broker connection was closed') });
    if (this.model) {
      this.emit('closing');
      // amqplib writes frames on setImmediate and round-robins its channels: a close frame sent now
      // could overtake the acks written just now or in the last turn, and the broker would redeliver
      // those messages. Two turns cost nothing at close.
      await new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
    }
    const model = this.model;
    this.model = undefined;
    this.publishers.closed();
    if (model) {
      try {
        await model.close();
      } catch {
        // The socket may already be gone; closing is best effort.
      }
    }
    this.setState(this.restingState('closed'));
  }

  /** A new channel on the live connection; throws when there is none. */
  async createChannel(): Promise<Channel> {
    const model = this.requireConnection();
    const channel = await model.createChannel();
    // Without a listener an 'error' event would crash the process; 'close' carries the consequence.
    channel.on('error', () => undefined);
    return channel;
  }

  /**
   * Runs `work` on a throwaway channel and closes it afterwards. For operations that may fail with
   * 404/406, which close the channel they run on: the consumer's own channel is never put at risk.
   */
  async withThrowawayChannel<T>(work: (channel: Channel) => Promise<T>): Promise<T> {
    const channel = await this.createChannel();
    let closed = false;
    channel.once('close', () => {
      closed = true;
    });
    try {
      return await work(channel);
    } finally {
      if (!closed) await closeChannel(channel);
    }
  }

  /**
   * Publishes with confirms on the channel of `purpose`. Each purpose gets its own channel, so a
   * publish that the broker answers with a channel error (404: no such exchange) in one node cannot
   * fail the parking of another. Under back-pressure publishes wait in `publishers.buffer`.
   */
  publisher(purpose = 'default', options: PublisherOptions = {}): Publisher {
    return this.publishers.publisher(purpose, options);
  }

  /** Closes the publisher of one purpose (a node that is going away). */
  closePublisher(purpose: string): Promise<void> {
    return this.publishers.close(purpose);
  }

  /**
   * The live connection, waiting up to `timeoutMs` while it is (re)connecting: a msg that arrives
   * during a reconnect is published a moment later instead of failing.
   */
  whenConnected(timeoutMs = 15_000): Promise<ChannelModel> {
    if (this.model) return Promise.resolve(this.model);
    if (this.current.phase === 'invalid') return Promise.reject(new Error(this.current.error));
    if (this.current.phase === 'idle' || this.current.phase === 'closed') {
      return Promise.reject(new Error('not connected to the broker (no node uses this broker configuration)'));
    }
    return this.waiters.wait(timeoutMs, () => new Error(`not connected to the broker after ${timeoutMs / 1000} s (${this.current.error ?? this.current.phase})`));
  }

  private requireConnection(): ChannelModel {
    if (!this.model) throw new Error(`not connected to the broker (${this.current.error ?? this.current.phase})`);
    return this.model;
  }

  private setState(state: ConnectionState): void {
    if ((state.phase === 'connected') !== (this.current.phase === 'connected')) this.changedAt = Date.now();
    this.current = state;
    this.emit('state', state);
  }

  private async connect(): Promise<void> {
    if (this.stopping || this.configError) return;
    this.attempt += 1;
    this.setState({ phase: 'connecting' });
    const dialed = await dialRound(this.targets, this.next, this.options, () => this.stopping);
    if (dialed === undefined) return;
    if ('failures' in dialed) {
      this.scheduleReconnect(dialed.failures.join('; '));
      return;
    }
    // Round-robin: after a loss the next attempt starts with the following node.
    this.next = (this.targets.indexOf(dialed.target) + 1) % this.targets.length;
    this.attach(dialed.model, dialed.target);
  }

  private attach(model: ChannelModel, target: ConnectTarget): void {
    this.model = model;
    this.attempt = 0;
    model.on('error', () => undefined); // 'close' follows and drives the reconnect
    // Each channel being closed waits on its connection's 'close' too (closeChannel): many at once are normal, not a leak.
    (model.connection as unknown as EventEmitter).setMaxListeners(0);
    model.on('close', (err?: Error) => this.onClosed(model, target, err));
    this.setState({ phase: 'connected', address: target.address });
    this.emit('connected', model);
    this.waiters.wake({ value: model });
    this.publishers.connected(model); // also follows the broker's blocked / unblocked
  }

  private onClosed(model: ChannelModel, target: ConnectTarget, err: Error | undefined): void {
    if (this.model !== model) return;
    this.model = undefined;
    this.publishers.disconnected();
    this.emit('disconnected', err);
    if (this.stopping) return;
    // Another node of a cluster may answer right away: try the others before waiting.
    if (this.targets.length > 1) void this.connect();
    else this.scheduleReconnect(err ? describeConnectionError(err, target) : 'connection closed by the broker');
  }

  private scheduleReconnect(why: string): void {
    if (this.stopping) return;
    const delay = backoffDelay(Math.max(1, this.attempt), this.options.reconnect);
    this.nextAttempt = Date.now() + delay;
    this.setState({ phase: 'waiting', error: why, retryInMs: delay });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, delay);
  }
}
