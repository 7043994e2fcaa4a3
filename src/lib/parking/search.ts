/**
 * Searching the parking queue without consuming it (a peek over a bounded window, see scan.ts), and
 * finding the copies of one replay run that were parked again (read as a peek reads, see browse.ts).
 */
import type { BrokerConnection } from '../connection';
import { plainHeaderValue } from '../amqp';
import { browseQueue } from './browse';
import { matchesFilter, type ParkedFilter } from './filter';
import { REPLAY_STAMP_HEADERS } from './replay';
import { scanQueue } from './scan';
import { describeParked, type ParkedMessage } from './view';

export interface SearchResult {
  /** The matching messages, up to `show` of them (previews). */
  messages: ParkedMessage[];
  /** How many matched among those looked at. */
  matched: number;
  /** How many were looked at: the window, or the whole queue when it is smaller. */
  lookedAt: number;
  /** Messages in the parking queue. */
  total: number;
}

/**
 * The parked messages matching `filter` among the first `window` of the queue, left in place; at most
 * `show` are returned whole (previews), all are counted.
 */
export async function searchParked(connection: BrokerConnection, queue: string, filter: ParkedFilter, options: { window: number; show: number; previewBytes: number }): Promise<SearchResult> {
  const messages: ParkedMessage[] = [];
  let matched = 0;
  let lookedAt = 0;
  const result = await scanQueue(connection, queue, options.window, (message, position) => {
    lookedAt += 1;
    const parked = describeParked(message, position, messages.length < options.show ? options.previewBytes : 0);
    if (matchesFilter(parked, filter)) {
      matched += 1;
      if (messages.length < options.show) messages.push(parked);
    }
    return Promise.resolve('keep');
  });
  return { messages, matched, lookedAt, total: result.remaining };
}

/**
 * How many messages in the parking queue carry `replayId` in their `replay-id` header: copies of that
 * replay run parked again. Reads the whole queue (headers only, nothing consumed): the parking queue
 * is where every consumer of the configuration parks, in any process, so it is the one place that
 * knows. Messages held by another reader meanwhile are not seen.
 */
export async function countParkedAgain(connection: BrokerConnection, queue: string, replayId: string): Promise<{ parkedAgain: number; messageIds: string[]; lookedAt: number }> {
  let parkedAgain = 0;
  const messageIds: string[] = [];
  const read = await browseQueue(connection, queue, Number.MAX_SAFE_INTEGER, (message) => {
    const id = plainHeaderValue(message.properties.headers?.[REPLAY_STAMP_HEADERS.replayId], true);
    if (id === replayId) {
      parkedAgain += 1;
      if (messageIds.length < 20 && typeof message.properties.messageId === 'string') messageIds.push(message.properties.messageId);
    }
    return false;
  });
  return { parkedAgain, messageIds, lookedAt: read.read };
}
