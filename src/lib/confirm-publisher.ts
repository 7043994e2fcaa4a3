/**
 * Publishing that is only "done" when the broker has taken responsibility for the message:
 * a confirm channel, `mandatory` on every publish, and the `return` event matched to its publish.
 * A confirm ack alone does not mean the message reached a queue.
 */
import type { ConfirmChannel, Message, Options } from 'amqplib';

export type PublishFailure = 'unroutable' | 'nacked' | 'channel-closed';

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

  constructor(private readonly channel: ConfirmChannel) {
    channel.on('return', (message: Message) => this.onReturn(message));
    channel.on('close', () => {
      this.closedReason ??= 'channel closed';
    });
    channel.on('error', (err: Error) => {
      this.closedReason = err.message;
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
    if (this.closedReason !== undefined) {
      return Promise.reject(new PublishError(`cannot publish: ${this.closedReason}`, 'channel-closed'));
    }
    const entry: InFlight = { exchange, routingKey, content, returned: false };
    this.inFlight.add(entry);
    return new Promise<void>((resolve, reject) => {
      const done = (err: unknown): void => {
        this.inFlight.delete(entry);
        if (entry.returned) {
          const target = exchange === '' ? `queue '${routingKey}' (default exchange)` : `exchange '${exchange}' with routing key '${routingKey}'`;
          reject(new PublishError(`message was returned unroutable: no queue is bound for ${target}`, 'unroutable'));
        } else if (err) {
          const text = err instanceof Error ? err.message : JSON.stringify(err);
          const failure: PublishFailure = /nack/i.test(text) ? 'nacked' : 'channel-closed';
          const detail = failure === 'nacked' ? 'the broker refused the message (nack)' : (this.closedReason ?? text);
          reject(new PublishError(`publish to ${exchange === '' ? `queue '${routingKey}'` : `exchange '${exchange}'`} failed: ${detail}`, failure));
        } else {
          resolve();
        }
      };
      try {
        this.channel.publish(exchange, routingKey, content, Object.assign({}, options, { mandatory: true }), done);
      } catch (err) {
        // amqplib throws synchronously when the channel is already closed.
        this.inFlight.delete(entry);
        this.closedReason ??= (err as Error).message;
        reject(new PublishError(`cannot publish: ${(err as Error).message}`, 'channel-closed'));
      }
    });
  }

  async close(): Promise<void> {
    if (this.closedReason !== undefined) return;
    this.closedReason = 'publisher closed';
    try {
      await this.channel.close();
    } catch {
      // Already closing with the connection: nothing left to release.
    }
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
