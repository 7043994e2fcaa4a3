/**
 * Parked messages as plain data, for peeking and selecting (purge / replay by messageId, routing key
 * or reason). Pure: the broker side is in parked.ts.
 */
import type { MessageProperties } from 'amqplib';
import { attemptHeaderCount, FAILURE_HEADERS, PARK_HEADERS, readDeaths } from '../message';
import { plainHeaderValue } from '../amqp';
import { TRACEPARENT_HEADER, traceIdOf } from '../trace';
import { foldReason, reasonMatcher } from './fold';
import { filterFrom, isEmptyFilter, matchesFilter, type ParkedFilter } from './filter';

/** Counts how often a message was replayed (each replay adds one; a park keeps it), so a message parked again and again shows it. */
export const REPLAY_HEADER = 'park-replayed';

/** The headers a replayed copy carries besides REPLAY_HEADER (none `x-` prefixed): who replayed it, when, in which run, where to. */
export const REPLAY_STAMP_HEADERS = { by: 'replayed-by', at: 'replayed-at', replayId: 'replay-id', redirectedTo: 'replay-redirected-to' } as const;

/** One parked message as a flow or the editor sees it: plain data only, no channel. */
export interface ParkedMessage {
  /** 0 = head of the parking queue, at the time of the peek. */
  position: number;
  messageId: string | null;
  correlationId: string | null;
  /** The trace it belongs to: the trace id of its W3C `traceparent` header, when it carries a valid one. */
  traceId: string | null;
  contentType: string | null;
  /** Why it was parked: `park-reason`, or the broker's dead-letter reason (e.g. `delivery_limit`). */
  reason: string | null;
  /** When it was parked (ISO): `park-time`, or the broker's dead-letter time. */
  parkedAt: string | null;
  /** Attempts made (`retry-attempt`), 0 when unknown. */
  attempts: number;
  /** How often it was replayed before it was parked again (REPLAY_HEADER), 0 when never. */
  replays: number;
  /** When it first and last failed (ISO), from the `park-*-failure-time` headers. */
  firstFailureAt: string | null;
  lastFailureAt: string | null;
  /** The flow's error, when it was an error object: `park-error-*` headers. */
  error: { name: string | null; message: string | null; stack: string | null; source: { id: string | null; type: string | null; name: string | null } } | null;
  originalExchange: string | null;
  originalRoutingKey: string | null;
  originalQueue: string | null;
  /** Body size in bytes. */
  size: number;
  /** The first bytes of the body: text when it is UTF-8, else base64. */
  preview: string;
  previewEncoding: 'utf8' | 'base64';
  truncated: boolean;
  /** All headers, JSON-safe (Buffers as text, timestamps as ISO strings). */
  headers: Record<string, unknown>;
}

/** What purge / replay select; empty selects everything. */
export interface ParkedSelection {
  messageIds?: string[];
  /** Exact original routing key. */
  routingKey?: string;
  /** Case-insensitive part of the park reason, or written `/…/flags` a regular expression matching it. */
  reason?: string;
  /** A group of parked messages: the folded park reason (foldReason), exactly. */
  group?: string;
  /** A search's filter (park time, reason text, message id): see filter.ts. */
  filter?: ParkedFilter;
}

export function isEmptySelection(selection: ParkedSelection | undefined): boolean {
  return !selection || (selection.messageIds === undefined && selection.routingKey === undefined && selection.reason === undefined && selection.group === undefined && isEmptyFilter(selection.filter));
}

/** A header value as JSON-safe plain data (Buffers as text, timestamps as ISO strings). */
export function plainValue(value: unknown): unknown {
  return plainHeaderValue(value, true);
}

function text(value: unknown): string | null {
  const v = plainValue(value);
  return typeof v === 'string' ? v : null;
}

/**
 * The preview as text when the bytes are UTF-8 without control characters other than whitespace,
 * else undefined (binary). A character cut at the end of the preview does not make it binary.
 */
function textPreview(bytes: Buffer, truncated: boolean): string | undefined {
  let decoded = new TextDecoder('utf-8').decode(bytes);
  if (truncated && decoded.endsWith('\ufffd')) decoded = decoded.slice(0, -1);
  for (let i = 0; i < decoded.length; i += 1) {
    const c = decoded.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0xfffd) return undefined;
  }
  return decoded;
}

function parkedError(headers: Record<string, unknown>): ParkedMessage['error'] {
  const h = (name: string): string | null => text(headers[name]);
  const error = {
    name: h(FAILURE_HEADERS.errorName),
    message: h(FAILURE_HEADERS.errorMessage),
    stack: h(FAILURE_HEADERS.errorStack),
    source: { id: h(FAILURE_HEADERS.sourceId), type: h(FAILURE_HEADERS.sourceType), name: h(FAILURE_HEADERS.sourceName) },
  };
  const any = [error.name, error.message, error.stack, error.source.id, error.source.type, error.source.name].some((v) => v !== null);
  return any ? error : null;
}

/** How often a message was replayed (REPLAY_HEADER), 0 when never or unreadable. */
export function replayCount(headers: Record<string, unknown>): number {
  const n = Number(plainValue(headers[REPLAY_HEADER]));
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** What grouping reads of a parked message, and nothing more (no body, no other headers): cheap for a whole queue. */
export function parkedSummary(headers: Record<string, unknown> | undefined): { reason: string | null; parkedAt: string | null; replays: number } {
  const h = headers ?? {};
  const reason = text(h[PARK_HEADERS.reason]);
  const parkedAt = text(h[PARK_HEADERS.time]);
  if (reason !== null && parkedAt !== null) return { reason, parkedAt, replays: replayCount(h) };
  const death = readDeaths(h)[0];
  return { reason: reason ?? death?.reason ?? null, parkedAt: parkedAt ?? death?.time ?? null, replays: replayCount(h) };
}

export function describeParked(
  message: { content: Buffer; properties: Pick<MessageProperties, 'headers' | 'messageId' | 'correlationId' | 'contentType'> },
  position: number,
  previewBytes: number,
): ParkedMessage {
  const headers = (message.properties.headers ?? {}) as Record<string, unknown>;
  const death = readDeaths(headers)[0];
  const head = message.content.subarray(0, previewBytes);
  const truncated = message.content.length > head.length;
  const preview = textPreview(head, truncated);
  return {
    position,
    messageId: text(message.properties.messageId),
    correlationId: text(message.properties.correlationId),
    traceId: traceIdOf(text(headers[TRACEPARENT_HEADER])),
    contentType: text(message.properties.contentType),
    reason: text(headers[PARK_HEADERS.reason]) ?? death?.reason ?? null,
    parkedAt: text(headers[PARK_HEADERS.time]) ?? death?.time ?? null,
    attempts: attemptHeaderCount(headers),
    replays: replayCount(headers),
    firstFailureAt: text(headers[FAILURE_HEADERS.firstFailure]),
    lastFailureAt: text(headers[FAILURE_HEADERS.lastFailure]),
    error: parkedError(headers),
    originalExchange: text(headers[PARK_HEADERS.originalExchange]) ?? death?.exchange ?? null,
    originalRoutingKey: text(headers[PARK_HEADERS.originalRoutingKey]) ?? death?.routingKeys[0] ?? null,
    originalQueue: text(headers[PARK_HEADERS.originalQueue]) ?? death?.queue ?? null,
    size: message.content.length,
    preview: preview ?? head.toString('base64'),
    previewEncoding: preview === undefined ? 'base64' : 'utf8',
    truncated,
    headers: plainValue(headers) as Record<string, unknown>,
  };
}

/** A selection from `messageIds` / `routingKey` / `reason` fields (a msg), checked: a typo must not select everything. */
export function selectionFrom(source: Record<string, unknown>): ParkedSelection {
  const selection: ParkedSelection = {};
  if (source.messageIds !== undefined) {
    const ids = typeof source.messageIds === 'string' ? [source.messageIds] : source.messageIds;
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id !== '')) {
      throw new Error('msg.messageIds must be a messageId or a non-empty array of them');
    }
    selection.messageIds = ids as string[];
  }
  for (const key of ['routingKey', 'reason', 'group'] as const) {
    const value = source[key];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value === '') throw new Error(`msg.${key} must be a non-empty string`);
    selection[key] = value;
  }
  if (source.filter !== undefined) {
    if (!source.filter || typeof source.filter !== 'object' || Array.isArray(source.filter)) throw new Error('msg.filter must be an object: {from, to, reason, messageId}');
    const filter = filterFrom(source.filter as Record<string, unknown>);
    if (!isEmptyFilter(filter)) selection.filter = filter;
  }
  // An invalid regular expression stops here, before anything is read.
  if (selection.reason !== undefined) reasonMatcher(selection.reason);
  return selection;
}

export function matchesSelection(parked: Pick<ParkedMessage, 'messageId' | 'originalRoutingKey' | 'reason'> & Partial<Pick<ParkedMessage, 'parkedAt'>>, selection: ParkedSelection | undefined): boolean {
  if (!selection) return true;
  if (selection.filter !== undefined && !matchesFilter({ messageId: parked.messageId, reason: parked.reason, parkedAt: parked.parkedAt ?? null }, selection.filter)) return false;
  if (selection.messageIds !== undefined && (parked.messageId === null || !selection.messageIds.includes(parked.messageId))) return false;
  if (selection.routingKey !== undefined && parked.originalRoutingKey !== selection.routingKey) return false;
  if (selection.reason !== undefined && !reasonMatcher(selection.reason)(parked.reason ?? '')) return false;
  if (selection.group !== undefined && foldReason(parked.reason) !== selection.group) return false;
  return true;
}

/**
 * Why reading a parking queue without removing messages would harm it, or undefined when it is
 * safe. A quorum queue counts every return as a delivery and drops (or dead-letters) a message past
 * its delivery limit: 20 by default on RabbitMQ 4, where -1 turns it off; RabbitMQ 3 has none by default.
 */
export function peekHazard(queue: string, queueArguments: Record<string, unknown>, brokerVersion: string | undefined): string | undefined {
  if (queueArguments['x-queue-type'] !== 'quorum') return undefined;
  const limit = queueArguments['x-delivery-limit'];
  const major = Number((brokerVersion ?? '').split('.')[0]);
  const unlimited = limit === -1 ? major >= 4 : limit === undefined && major > 0 && major < 4;
  if (unlimited) return undefined;
  const fix = major >= 4 || !(major > 0) ? '"x-delivery-limit": -1' : 'no "x-delivery-limit"';
  return (
    `parking queue '${queue}' is a quorum queue with a delivery limit: every peek or selective purge / replay returns the ` +
    `messages it reads and counts as a delivery, so a message would be dropped after a few; give it ${fix} in the parking queue arguments`
  );
}
