/**
 * Reading a whole queue without consuming it, fast: a consumer without acks on a channel of its own,
 * closed after the read, so the broker returns every message to its old place (as a peek does, see
 * scan.ts) — but delivered in a stream rather than fetched one round trip at a time. Reads at most the
 * queue's depth when it started: messages parked meanwhile are not read.
 */
import type { Channel, ConsumeMessage } from 'amqplib';
import type { BrokerConnection } from '../connection';
import { closeChannel } from '../amqp';
import { queueDepth } from './scan';

/** A read gives up waiting when no message came for this long (another reader took the rest). */
const IDLE_MS = 2000;

export interface BrowseResult {
  /** Messages read: fewer than `depth` when the visitor stopped, or when another reader held some (the read ends after IDLE_MS without one). */
  read: number;
  /** Ready messages in the queue when the read started. */
  depth: number;
}

/**
 * Hands the first `limit` messages of `queue` (never more than its depth at the start) to `visit`,
 * in queue order, then returns them all to the queue; `visit` returns true to end the read there, false to go on.
 * `visit` must not keep the message: the read holds no message body longer than its visit.
 */
export async function browseQueue(connection: BrokerConnection, queue: string, limit: number, visit: (message: ConsumeMessage, position: number) => boolean): Promise<BrowseResult> {
  const channel: Channel = await connection.createChannel();
  try {
    const depth = await queueDepth(channel, queue);
    const wanted = Math.min(limit, depth);
    if (wanted <= 0) return { read: 0, depth };
    let read = 0;
    let stopped = false;
    await new Promise<void>((resolve, reject) => {
      let idle: NodeJS.Timeout | undefined;
      const finish = (): void => {
        clearTimeout(idle);
        resolve();
      };
      const arm = (): void => {
        clearTimeout(idle);
        idle = setTimeout(finish, IDLE_MS);
      };
      // Closed under the read (the connection went away, the queue was deleted): not a whole read.
      channel.once('close', () => {
        clearTimeout(idle);
        reject(new Error(`the read of '${queue}' stopped after ${read} of ${wanted} messages: its channel closed`));
      });
      // No prefetch limit: the broker streams the queue; the messages past `wanted` (parked since
      // the start) are returned unread with the rest when the channel closes.
      channel
        .consume(
          queue,
          (message) => {
            // null: the broker cancelled the consumer (the queue was deleted).
            if (message === null) {
              clearTimeout(idle);
              reject(new Error(`the read of '${queue}' stopped after ${read} of ${wanted} messages: the queue went away`));
              return;
            }
            if (stopped || read >= wanted) return;
            let stop: boolean;
            try {
              stop = visit(message, read);
            } catch (err) {
              clearTimeout(idle);
              reject(err instanceof Error ? err : new Error(String(err)));
              return;
            }
            read += 1;
            stopped = stop || read >= wanted;
            if (stopped) finish();
            else arm();
          },
          { noAck: false, exclusive: false },
        )
        .then(arm, reject);
    });
    return { read, depth };
  } finally {
    // Closing the channel returns every message it holds unacked: the queue is as it was.
    await closeChannel(channel);
  }
}
