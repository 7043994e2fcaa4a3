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

export class ConfirmPublisher {
  private readonly inFlight = new Set<InFlight>();
  private closedReason: string | undefined;
  /** The AMQP reply code the broker closed the channel with (404, 406, ...). */
  private closedCode: number | undefined;
  /** The headers of every publish go to amqplib on one reused object (see HeaderCarrier: a fresh one per message costs 4–6 µs). */
  private readonly headers = new HeaderCarrier();

  constructor(private readonly channel: ConfirmChannel) {
    channel.on('return', (message: Message) => this.onReturn(message));
    channel.on('close', () => {
      this.closedReason ??= 'channel closed';
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
        if (entry.returned) {
          const target = exchange === '' ? `queue '${routingKey}' (default exchange)` : `exchange '${exchange}' with routing key '${routingKey}'`;
          const hint = routingKey === '' ? ' (the routing key is empty: set one on the node or in msg.topic)' : '';
          reject(new PublishError(`message was returned unroutable: no queue is bound for ${target}${hint}`, 'unroutable'));
        } else if (err) {
          const text = err instanceof Error ? err.message : JSON.stringify(err);
          const failure: PublishFailure = /nack/i.test(text) ? 'nacked' : 'channel-closed';
          const detail = failure === 'nacked' ? 'the broker refused the message (nack)' : describeChannelClose(this.closedCode, this.closedReason ?? text, exchange);
          reject(new PublishError(`publish to ${exchange === '' ? `queue '${routingKey}'` : `exchange '${exchange}'`} failed: ${detail}`, failure));
        } else {
          resolve();
        }
      };
      // The package's own copies come with mandatory set already: no copy of their options then.
      const sent = options.mandatory === true ? options : Object.assign({}, options, { mandatory: true });
      const headers = sent.headers as Record<string, unknown> | null | undefined;
      const lent = headers !== null && typeof headers === 'object' ? this.headers.lend(headers) : undefined;
      // Lent for the call only: the caller's options have their own headers back right after it.
      if (lent !== undefined) sent.headers = lent;
      try {
        // amqplib encodes the headers within this call: the carrier is free again right after it.
        written = this.channel.publish(exchange, routingKey, content, sent, done);
      } catch (err) {
        this.inFlight.delete(entry);
        // amqplib throws synchronously when the channel is already closed, and when it cannot encode
        // the properties: then nothing was sent and the channel is fine.
        if ((err as Error).name === 'IllegalOperationError') {
          this.closedReason ??= (err as Error).message;
          reject(new PublishError(`cannot publish: ${(err as Error).message}`, 'channel-closed'));
        } else {
          reject(new PublishError(`cannot encode the message's properties or headers: ${(err as Error).message}`, 'unencodable'));
        }
      } finally {
        if (lent !== undefined) {
          sent.headers = headers as Record<string, unknown>;
          this.headers.release(lent);
        }
      }
    });
    return { written, confirmed };
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
    for (const entry of this.inFlight) {
      if (
        !entry.returned &&
        entry.exchange === message.fields.exchange &&
        entry.routingKey === message.fields.routingKey &&
        entry.content.equals(message.content)
      ) {
        entry.returned = true;
        return;
      }
    }
  }
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
