/**
 * Publishing that is only "done" when the broker has taken responsibility for the message:
 * a confirm channel, `mandatory` on every publish, and the `return` event matched to its publish.
 * A confirm ack alone does not mean the message reached a queue.
 */
import type { ConfirmChannel, Message, Options } from 'amqplib';
import { closeChannel } from '../amqp';
import { HeaderCarrier } from './header-carrier';

export type PublishFailure = 'unroutable' | 'nacked' | 'channel-closed' | 'unencodable' | 'buffer-full';

export class PublishError extends Error {
  constructor(
    message: string,
    readonly failure: PublishFailure,
  ) {
    super(message);
    this.name = 'PublishError';
  }
}

interface InFlight {
  exchange: string;
  routingKey: string;
  content: Buffer;
  returned: boolean;
}

/** One message of a batch as {@link ConfirmPublisher.sendBatch} reads it: during the call that returned it only (the object may be reused). */
export interface BatchMessage {
  exchange: string;
  routingKey: string;
  content: Buffer;
  options: Options.Publish;
}

/** A batch message's outcome: undefined once confirmed and not returned, else why not. Called once per message. */
export type BatchSettle = (i: number, error: PublishError | undefined) => void;

/** A batch's messages in flight, for matching returns: what each was sent to and with, and how far each got. */
interface BatchInFlight {
  exchanges: string[];
  routingKeys: string[];
  contents: Buffer[];
  /** Per message: SENT, RETURNED or SETTLED. */
  state: Uint8Array;
  left: number;
}

const SENT = 0;
const RETURNED = 1;
const SETTLED = 2;

export class ConfirmPublisher {
  /** Single publishes and batches, in publish order (a batch's messages go out in one synchronous run). */
  private readonly inFlight = new Set<InFlight | BatchInFlight>();
  private closedReason: string | undefined;
  /** The AMQP reply code the broker closed the channel with (404, 406, ...). */
  private closedCode: number | undefined;
  /** Why the channel's connection is going, once told ({@link connectionGone}). */
  private connectionGoneWhy: string | undefined;
  /** The connection's socket, corked around a batch's writes (undefined: not one that can be). */
  private readonly socket: Corkable | undefined;
  /** The headers of every publish go to amqplib on one reused object (see HeaderCarrier: a fresh one per message costs 4–6 µs). */
  private readonly headers = new HeaderCarrier();

  constructor(private readonly channel: ConfirmChannel) {
    this.socket = socketOf(channel);
    channel.on('return', (message: Message) => this.onReturn(message));
    // Before amqplib's own `close` listener fails the unconfirmed publishes: they then carry the cause.
    channel.prependListener('close', () => {
      this.closedReason ??= this.connectionGoneWhy === undefined ? 'channel closed' : `channel closed: ${this.connectionGoneWhy}`;
    });
    channel.on('error', (err: Error & { code?: unknown }) => {
      this.closedReason = err.message;
      if (typeof err.code === 'number') this.closedCode = err.code;
    });
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  /**
   * The channel's connection is going (`why`: lost, with the broker's or the socket's error, or closed
   * by this client): told before its channels close, so a publish it fails says why, not only "channel
   * closed" (issue 52, item 8). A channel error of its own still wins.
   */
  connectionGone(why: string): void {
    this.connectionGoneWhy ??= why;
  }

  /**
   * Resolves once the broker confirmed the message and did not return it; rejects with a
   * {@link PublishError} otherwise. `mandatory` is always set.
   */
  publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish = {}): Promise<void> {
    return this.send(exchange, routingKey, content, options).confirmed;
  }

  /**
   * Like {@link publish}, and also says whether the channel's write buffer still has room: `written`
   * false means "wait for {@link whenWritable} before the next publish" (amqplib buffers it anyway).
   */
  send(exchange: string, routingKey: string, content: Buffer, options: Options.Publish = {}): { written: boolean; confirmed: Promise<void> } {
    if (this.closedReason !== undefined) {
      return { written: true, confirmed: Promise.reject(new PublishError(`cannot publish: ${this.closedReason}`, 'channel-closed')) };
    }
    const entry: InFlight = { exchange, routingKey, content, returned: false };
    this.inFlight.add(entry);
    let written = true;
    const confirmed = new Promise<void>((resolve, reject) => {
      const done = (err: unknown): void => {
        this.inFlight.delete(entry);
        const failure = this.failureOf(entry.returned, err, exchange, routingKey);
        if (failure === undefined) resolve();
        else reject(failure);
      };
      const sent = this.write(exchange, routingKey, content, options, done);
      if (typeof sent === 'boolean') written = sent;
      else {
        this.inFlight.delete(entry);
        reject(sent);
      }
    });
    return { written, confirmed };
  }

  /**
   * Publishes `n` messages in one synchronous run (`message(i)` gives each; mandatory always set) and
   * tells each one's outcome to `settle`, as {@link publish} would resolve or reject it: no promise
   * per message. Returns whether the channel's write buffer still has room after the last one.
   */
  sendBatch(n: number, message: (i: number) => BatchMessage, settle: BatchSettle): boolean {
    if (n === 0) return true;
    if (this.closedReason !== undefined) {
      for (let i = 0; i < n; i++) settle(i, new PublishError(`cannot publish: ${this.closedReason}`, 'channel-closed'));
      return true;
    }
    const batch: BatchInFlight = { exchanges: new Array<string>(n), routingKeys: new Array<string>(n), contents: new Array<Buffer>(n), state: new Uint8Array(n), left: n };
    this.inFlight.add(batch);
    const finish = (i: number, failure: PublishError | undefined): void => {
      if (batch.state[i] === SETTLED) return;
      batch.state[i] = SETTLED;
      if (--batch.left === 0) this.inFlight.delete(batch);
      settle(i, failure);
    };
    // The batch's frames go to the socket in one write (see uncorkAfterMux).
    const socket = this.socket;
    socket?.cork();
    try {
      return this.sendEach(n, message, batch, finish);
    } finally {
      if (socket !== undefined) process.nextTick(uncorkAfterMux, socket);
    }
  }

  /** Publishes a batch's messages one after the other; whether the write buffer still has room. */
  private sendEach(n: number, message: (i: number) => BatchMessage, batch: BatchInFlight, finish: (i: number, failure: PublishError | undefined) => void): boolean {
    let written = true;
    for (let i = 0; i < n; i++) {
      const { exchange, routingKey, content, options } = message(i);
      batch.exchanges[i] = exchange;
      batch.routingKeys[i] = routingKey;
      batch.contents[i] = content;
      const sent = this.write(exchange, routingKey, content, options, (err: unknown) => finish(i, this.failureOf(batch.state[i] === RETURNED, err, exchange, routingKey)));
      if (typeof sent !== 'boolean') finish(i, sent);
      else if (!sent) written = false;
    }
    return written;
  }

  /**
   * Hands one publish to the channel (mandatory; the headers lent on the carrier for the call);
   * whether the write buffer has room, or why nothing was sent (`done` is then never called).
   */
  private write(exchange: string, routingKey: string, content: Buffer, options: Options.Publish, done: (err: unknown) => void): boolean | PublishError {
    // The package's own copies come with mandatory set already: no copy of their options then.
    const sent = options.mandatory === true ? options : Object.assign({}, options, { mandatory: true });
    const headers = sent.headers as Record<string, unknown> | null | undefined;
    const lent = headers !== null && typeof headers === 'object' ? this.headers.lend(headers) : undefined;
    // Lent for the call only: the caller's options have their own headers back right after it.
    if (lent !== undefined) sent.headers = lent;
    try {
      // amqplib encodes the headers within this call: the carrier is free again right after it.
      return this.channel.publish(exchange, routingKey, content, sent, done);
    } catch (err) {
      // amqplib throws synchronously when the channel is already closed, and when it cannot encode
      // the properties: then nothing was sent and the channel is fine.
      if ((err as Error).name === 'IllegalOperationError') {
        this.closedReason ??= (err as Error).message;
        return new PublishError(`cannot publish: ${(err as Error).message}`, 'channel-closed');
      }
      return new PublishError(`cannot encode the message's properties or headers: ${(err as Error).message}`, 'unencodable');
    } finally {
      if (lent !== undefined) {
        sent.headers = headers as Record<string, unknown>;
        this.headers.release(lent);
      }
    }
  }

  /** What a publish's confirm callback (`err`) and its return make of it: undefined when it got through. */
  private failureOf(returned: boolean, err: unknown, exchange: string, routingKey: string): PublishError | undefined {
    if (returned) {
      const target = exchange === '' ? `queue '${routingKey}' (default exchange)` : `exchange '${exchange}' with routing key '${routingKey}'`;
      const hint = routingKey === '' ? ' (the routing key is empty: set one on the node or in msg.topic)' : '';
      return new PublishError(`message was returned unroutable: no queue is bound for ${target}${hint}`, 'unroutable');
    }
    if (!err) return undefined;
    const text = err instanceof Error ? err.message : JSON.stringify(err);
    const failure: PublishFailure = /nack/i.test(text) ? 'nacked' : 'channel-closed';
    const detail = failure === 'nacked' ? 'the broker refused the message (nack)' : describeChannelClose(this.closedCode, this.closedReason ?? text, exchange);
    return new PublishError(`publish to ${exchange === '' ? `queue '${routingKey}'` : `exchange '${exchange}'`} failed: ${detail}`, failure);
  }

  /** Resolves when the channel's write buffer drained, or the channel closed (nothing to wait for then). */
  whenWritable(): Promise<void> {
    if (this.closedReason !== undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const settle = (): void => {
        this.channel.off('drain', settle);
        this.channel.off('close', settle);
        resolve();
      };
      this.channel.on('drain', settle);
      this.channel.on('close', settle);
    });
  }

  async close(): Promise<void> {
    if (this.closedReason !== undefined) return;
    this.closedReason = 'publisher closed';
    await closeChannel(this.channel);
  }

  /**
   * The broker sends basic.return before the confirm of the same publish. Returns arrive in publish
   * order, so the oldest unreturned publish with the same target and body is the one returned.
   */
  private onReturn(message: Message): void {
    const { exchange, routingKey } = message.fields;
    for (const entry of this.inFlight) {
      if ('state' in entry) {
        for (let i = 0; i < entry.state.length; i++) {
          if (entry.state[i] === SENT && entry.exchanges[i] === exchange && entry.routingKeys[i] === routingKey && entry.contents[i]?.equals(message.content) === true) {
            entry.state[i] = RETURNED;
            return;
          }
        }
      } else if (!entry.returned && entry.exchange === exchange && entry.routingKey === routingKey && entry.content.equals(message.content)) {
        entry.returned = true;
        return;
      }
    }
  }
}

/** What a batch needs of the connection's socket. */
interface Corkable {
  cork(): void;
  uncork(): void;
}

/** The socket of a channel's connection (amqplib's `channel.connection.stream`), if it is one that corks. */
function socketOf(channel: ConfirmChannel): Corkable | undefined {
  const stream = (channel as unknown as { connection?: { stream?: Partial<Corkable> } }).connection?.stream;
  return typeof stream?.cork === 'function' && typeof stream.uncork === 'function' ? (stream as Corkable) : undefined;
}

/**
 * Uncorks a socket corked for a batch once amqplib has moved the batch's frames to it. amqplib writes
 * a publish to its channel's buffer, and its muxer moves the buffered frames to the socket in a
 * setImmediate it schedules on the buffer's 'readable' event, itself emitted in a process.nextTick
 * queued by the batch's first publish. Called in a process.nextTick queued after that one, the
 * setImmediate here runs after the muxer's: the socket then writes the batch's frames in one go
 * instead of one system call per frame. The uncork always runs (the next turn of the event loop at
 * the latest), so the socket is never left corked.
 */
function uncorkAfterMux(socket: Corkable): void {
  setImmediate(() => socket.uncork());
}

/**
 * Why the broker closed a publishing channel, as a user can act on it. Branches on the reply code;
 * the names and sizes are only in the text.
 */
export function describeChannelClose(code: number | undefined, text: string, exchange: string): string {
  if (code === 404) {
    const named = /no exchange '([^']*)'/.exec(text)?.[1] ?? exchange;
    return `exchange '${named}' does not exist (404 NOT_FOUND; the broker closed this publishing channel, the next publish opens a new one)`;
  }
  if (code === 406) {
    const size = /message size (\d+) is larger than configured max size (\d+)/.exec(text);
    if (size) return `a message of ${size[1]} bytes is larger than the broker's max_message_size of ${size[2]} bytes (406 PRECONDITION_FAILED)`;
  }
  return text;
}
