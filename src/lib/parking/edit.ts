/**
 * Edit and replay of one parked message, the pure part: which headers a person may not change, the
 * checks on an edit, and the edited copy's properties. The copy is a replay (replay.ts publishes it,
 * confirmed, before the original leaves the parking queue) with the edited body and headers, a new
 * message id, a header linking the original and who edited it when.
 */
import type { MessageProperties, Options } from 'amqplib';
import { TRACEPARENT_HEADER, TRACESTATE_HEADER } from '../trace';
import { REPLAY_STAMP_HEADERS } from './view';

/**
 * The headers an edited copy gets: the original's message id, and who edited and replayed it (the
 * editor's user name, or `anonymous` without adminAuth) when (ISO) — the names every replayed copy's
 * stamp uses.
 */
export const EDIT_HEADERS = { replayOf: 'replay-of', editedBy: REPLAY_STAMP_HEADERS.by, editedAt: REPLAY_STAMP_HEADERS.at } as const;

/**
 * Headers nobody edits, because they are records rather than data: the attempt history and the
 * retry route (`retry-…`), the park record (`park-…`: reason, error, times — dropped from the copy as
 * in any replay — and the replay count, which the copy carries counted up), the broker's own (`x-…`: `x-death` and the rest, which RabbitMQ
 * reads or writes itself), the trace context (`traceparent`, `tracestate`: the copy continues the
 * message's trace) and a replay's own record (`replay-…`, `replayed-…`: the link to the original,
 * who replayed it when).
 */
export const LOCKED_HEADERS = {
  prefixes: ['retry-', 'park-', 'x-', 'replay-', 'replayed-'],
  names: [TRACEPARENT_HEADER, TRACESTATE_HEADER],
} as const;

export function isLockedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return (LOCKED_HEADERS.names as readonly string[]).includes(lower) || LOCKED_HEADERS.prefixes.some((prefix) => lower.startsWith(prefix));
}

/** What a person changed: the whole body as text (UTF-8), and the editable headers as they should be (a header left out is removed). */
export interface ParkedEdit {
  body: string;
  headers: Record<string, unknown>;
}

/** The most an edited header name may be (AMQP's short string). */
const MAX_NAME = 255;

/** An edit refused for what it asks (a locked header, a body that is not JSON): the person's to fix, not the broker's. */
export class EditRefused extends Error {}

/** An edit from a request body, checked; throws EditRefused saying what is wrong (naming a locked header). */
export function readEdit(source: unknown): ParkedEdit {
  const input = (source ?? {}) as { body?: unknown; headers?: unknown };
  if (typeof input.body !== 'string') throw new EditRefused('give the edited body as text (body)');
  const headers = input.headers ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) throw new EditRefused('headers must be an object of header names and values');
  for (const [name, value] of Object.entries(headers)) {
    if (isLockedHeader(name)) throw new EditRefused(`header '${name}' is locked: the attempt history, the park record, the broker's x- headers, the trace context and the replay's record are kept as they are`);
    if (name.trim() === '' || name.length > MAX_NAME) throw new EditRefused(`header name '${name}' must be 1 to ${MAX_NAME} characters`);
    if (value === undefined || typeof value === 'function' || typeof value === 'bigint' || typeof value === 'symbol') throw new EditRefused(`header '${name}' has no value a message can carry`);
  }
  return { body: input.body, headers: headers as Record<string, unknown> };
}

/** A message whose content type says JSON keeps a JSON body: throws EditRefused otherwise. */
export function checkEditedBody(body: string, contentType: string | null): void {
  if (contentType === null || !/\bjson\b/i.test(contentType)) return;
  try {
    JSON.parse(body);
  } catch (err) {
    throw new EditRefused(`the body is not JSON (${(err as Error).message}), but the message's content type is ${contentType}`, { cause: err });
  }
}

/** Which headers the edit changes, adds or removes, by name (for the audit log). */
export function changedHeaders(original: Record<string, unknown> | undefined, edit: ParkedEdit): string[] {
  const before = Object.fromEntries(Object.entries(original ?? {}).filter(([name]) => !isLockedHeader(name)));
  const names = new Set([...Object.keys(before), ...Object.keys(edit.headers)]);
  return [...names].filter((name) => JSON.stringify(plain(before[name])) !== JSON.stringify(edit.headers[name])).sort();
}

/** A header value as JSON would say it (a Buffer as its text), to compare it with an edited one. */
function plain(value: unknown): unknown {
  return Buffer.isBuffer(value) ? value.toString('utf8') : value;
}

/** Who edited and replayed a message when, the copy's new message id, and the replay's id (`replay-id`; none without). */
export interface EditedBy {
  user: string | undefined;
  at: Date;
  messageId: string;
  replayId?: string;
}

/**
 * The edited copy: the replay's properties (`replay`, from replayPublishOptions) with its locked
 * headers kept, the editable ones replaced by the edit's, a new message id, and the link to the
 * original with who edited it when, in which replay. An earlier replay's record (who, when, which
 * run, where to) is not kept: the copy says this replay only, as every replayed copy does.
 */
export function editedPublishOptions(replay: Options.Publish, original: Pick<MessageProperties, 'messageId'>, edit: ParkedEdit, by: EditedBy): Options.Publish {
  const stamps = new Set<string>(Object.values(REPLAY_STAMP_HEADERS));
  const locked = Object.entries((replay.headers ?? {}) as Record<string, unknown>).filter(([name]) => isLockedHeader(name) && !stamps.has(name));
  const headers: Record<string, unknown> = Object.assign(Object.fromEntries(locked), edit.headers, {
    [EDIT_HEADERS.replayOf]: typeof original.messageId === 'string' ? original.messageId : null,
    [EDIT_HEADERS.editedBy]: by.user ?? 'anonymous',
    [EDIT_HEADERS.editedAt]: by.at.toISOString(),
  });
  if (by.replayId !== undefined) headers[REPLAY_STAMP_HEADERS.replayId] = by.replayId;
  return { ...replay, headers, messageId: by.messageId };
}
