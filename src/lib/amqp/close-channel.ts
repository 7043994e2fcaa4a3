/**
 * Closing an amqplib channel without hanging. amqplib 2.3's `channel.close()` settles only on the
 * broker's close-ok: when the connection goes away first, the channel ends (its `close` event fires)
 * but the promise never settles, and a node's close waits until Node-RED gives up ("Close timed out").
 */
import type { EventEmitter } from 'node:events';
import type { Channel } from 'amqplib';

/** How long a close waits for the broker's answer at most: the channel is of no use afterwards either way. */
export const CHANNEL_CLOSE_TIMEOUT_MS = 2_000;

/**
 * Closes `channel` and resolves on the close-ok, on the channel's `close` event, on its connection's
 * `close`, or after `timeoutMs` — whichever comes first. Never rejects: a channel that is closed
 * already, or closes under us, is what the caller wanted.
 */
export function closeChannel(channel: Channel, timeoutMs = CHANNEL_CLOSE_TIMEOUT_MS): Promise<void> {
  // amqplib's Connection is an EventEmitter; its typings show only serverProperties.
  const connection = channel.connection as unknown as EventEmitter | undefined;
  return new Promise<void>((resolve) => {
    const finish = (): void => {
      clearTimeout(timer);
      channel.off('close', finish);
      connection?.off('close', finish);
      resolve();
    };
    const timer = setTimeout(finish, timeoutMs);
    timer.unref?.();
    channel.on('close', finish);
    connection?.on('close', finish);
    try {
      channel.close().then(finish, finish);
    } catch {
      finish(); // closed already: amqplib throws at once
    }
  });
}
