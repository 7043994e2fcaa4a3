/**
 * Reading the parking queue without consuming it, and purging it, over AMQP.
 *
 * AMQP has no "peek": messages are read with basic.get without ack on ONE channel and that channel is
 * then closed, so the broker returns every message it did not get an ack for. A classic queue puts
 * them back at their old positions (order kept; they are flagged redelivered). While a scan runs the
 * messages it holds are invisible to other readers of the queue. Messages parked during the scan are
 * not read: a scan covers at most the queue's depth when it started.
 */
import type { Channel, GetMessage } from 'amqplib';
import type { BrokerConnection } from '../connection';
import { describeParked, isEmptySelection, matchesSelection, type ParkedMessage, type ParkedSelection } from './view';
import { closeChannel } from '../amqp';

/** What a visitor does with a scanned message: remove it (ack), keep it (returned at the end), or stop the scan. */
export type ScanVerdict = 'remove' | 'keep' | 'stop';

export interface ScanResult {
  /** Messages removed (acked). */
  removed: number;
  /** Messages in the queue after the scan (those kept included). */
  remaining: number;
}

/** Ready messages in the queue; a missing queue is an error that names it (404 closes the channel). */
export async function queueDepth(channel: Channel, queue: string): Promise<number> {
  try {
    return (await channel.checkQueue(queue)).messageCount;
  } catch (err) {
    if ((err as { code?: unknown }).code === 404) throw new Error(`parking queue '${queue}' does not exist (yet): a retry consumer of this config declares it`, { cause: err });
    throw err;
  }
}

/** Body bytes shown in a peek unless told otherwise. */
export const DEFAULT_PREVIEW_BYTES = 1024;

/** How many messages a selective purge or replay looks at, at most: they are held in memory meanwhile. */
export const MAX_SCAN = 10_000;

/**
 * Reads up to `limit` messages from the head of `queue` (never more than its depth at the start) and
 * asks `visit` about each. Removals are acked on the scan's channel, confirmed by a round trip on it
 * before the channel closes and the kept messages return to the queue.
 */
export async function scanQueue(
  connection: BrokerConnection,
  queue: string,
  limit: number,
  visit: (message: GetMessage, position: number) => Promise<ScanVerdict>,
): Promise<ScanResult> {
  const channel: Channel = await connection.createChannel();
  let kept = 0;
  let removed = 0;
  try {
    const depth = await queueDepth(channel, queue);
    for (let position = 0; position < Math.min(limit, depth); position += 1) {
      const message = await channel.get(queue, { noAck: false });
      if (message === false) break;
      const verdict = await visit(message, position);
      if (verdict === 'remove') {
        channel.ack(message);
        removed += 1;
      } else {
        kept += 1;
      }
      if (verdict === 'stop') break;
    }
    // Acks are not answered in AMQP; a synchronous method after them is, and the broker handles a
    // channel's methods in order: once this answers, every ack above has been applied.
    const { messageCount: ready } = await channel.checkQueue(queue);
    return { removed, remaining: ready + kept };
  } finally {
    // Closing the channel returns the messages it holds unacked (the kept ones) to the queue.
    await closeChannel(channel);
  }
}

export interface PeekResult {
  messages: ParkedMessage[];
  /** Messages in the parking queue. */
  total: number;
}

/** Up to `limit` parked messages from the head of the queue, left in place (see the module comment). */
export async function peekParked(connection: BrokerConnection, queue: string, options: { limit: number; previewBytes?: number }): Promise<PeekResult> {
  const messages: ParkedMessage[] = [];
  const previewBytes = options.previewBytes ?? DEFAULT_PREVIEW_BYTES;
  const result = await scanQueue(connection, queue, options.limit, (message, position) => {
    messages.push(describeParked(message, position, previewBytes));
    return Promise.resolve('keep');
  });
  return { messages, total: result.remaining };
}

/** Which parked message to read: by its messageId, else by its position (0 = head) at the time of the read. */
export interface ParkedLocator {
  messageId?: string;
  position?: number;
}

/**
 * One parked message with its body (up to `bodyBytes`, `truncated` says when there is more), left in
 * place: the first with the locator's messageId, or, without one, the one at its position. Looks at
 * most `limit` messages from the head; undefined when none matches (replayed or purged meanwhile).
 */
export async function findParked(connection: BrokerConnection, queue: string, locator: ParkedLocator, options: { limit: number; bodyBytes: number }): Promise<ParkedMessage | undefined> {
  let found: ParkedMessage | undefined;
  const byId = locator.messageId !== undefined && locator.messageId !== '';
  await scanQueue(connection, queue, options.limit, (message, position) => {
    const hit = byId ? message.properties.messageId === locator.messageId : position === locator.position;
    if (!hit) return Promise.resolve(!byId && locator.position !== undefined && position >= locator.position ? 'stop' : 'keep');
    found = describeParked(message, position, options.bodyBytes);
    return Promise.resolve('stop');
  });
  return found;
}

export interface PurgeResult {
  purged: number;
  remaining: number;
}

/**
 * Removes parked messages: all of them (AMQP queue.purge, answered by the broker with the count),
 * or those matching the selection among the first `scanLimit` (the others are returned in place).
 */
export async function purgeParked(connection: BrokerConnection, queue: string, options: { selection?: ParkedSelection; scanLimit?: number } = {}): Promise<PurgeResult> {
  if (isEmptySelection(options.selection)) {
    return connection.withThrowawayChannel(async (channel) => {
      await queueDepth(channel, queue);
      const { messageCount } = await channel.purgeQueue(queue);
      const after = await channel.checkQueue(queue);
      return { purged: messageCount, remaining: after.messageCount };
    });
  }
  const result = await scanQueue(connection, queue, options.scanLimit ?? MAX_SCAN, (message, position) =>
    Promise.resolve(matchesSelection(describeParked(message, position, 0), options.selection) ? 'remove' : 'keep'),
  );
  return { purged: result.removed, remaining: result.remaining };
}
