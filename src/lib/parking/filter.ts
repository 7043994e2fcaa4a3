/**
 * Searching the parking queue without consuming it: a filter by park time, reason text and message id,
 * checked before anything is read (a typo must never select everything). Pure.
 */

/** What a search keeps; every field left out keeps every message. */
export interface ParkedFilter {
  /** Parked at or after this time (ISO 8601). */
  from?: string;
  /** Parked at or before this time (ISO 8601). */
  to?: string;
  /** Part of the park reason, any case. */
  reasonText?: string;
  /** Part of the message id, any case. */
  messageIdText?: string;
}

/** How many parked messages a search looks at unless told otherwise, and at most. */
export const DEFAULT_SEARCH_WINDOW = 5000;
export const MAX_SEARCH_WINDOW = 10_000;

const FIELDS = ['from', 'to', 'reasonText', 'messageIdText'] as const;

function timeOf(value: string, name: string): number {
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw new Error(`filter ${name} must be a date and time (ISO 8601, e.g. 2026-11-28T05:00:00Z), got ${JSON.stringify(value)}`);
  return ms;
}

/**
 * A filter from plain fields (a request body, a msg): `from`, `to`, `reason` (or `reasonText`),
 * `messageId` (or `messageIdText`); empty strings are left out. Throws on anything it cannot use.
 */
export function filterFrom(source: Record<string, unknown>): ParkedFilter {
  const raw: Record<string, unknown> = { from: source.from, to: source.to, reasonText: source.reasonText ?? source.reason, messageIdText: source.messageIdText ?? source.messageId };
  const filter: ParkedFilter = {};
  for (const name of FIELDS) {
    const value = raw[name];
    if (value === undefined || value === null || value === '') continue;
    if (typeof value !== 'string') throw new Error(`filter ${name} must be text, got ${JSON.stringify(value)}`);
    filter[name] = value.trim();
  }
  if (filter.from !== undefined && filter.to !== undefined && timeOf(filter.from, 'from') > timeOf(filter.to, 'to')) {
    throw new Error(`filter from (${filter.from}) is after to (${filter.to}): nothing could match`);
  }
  if (filter.from !== undefined) timeOf(filter.from, 'from');
  if (filter.to !== undefined) timeOf(filter.to, 'to');
  return filter;
}

export function isEmptyFilter(filter: ParkedFilter | undefined): boolean {
  return !filter || FIELDS.every((name) => filter[name] === undefined);
}

/** What a filter reads of a parked message. */
export type FilteredFields = { messageId: string | null; reason: string | null; parkedAt: string | null };

/**
 * Whether a parked message passes the filter. A message without a park time passes no time bound; one
 * without a reason or message id passes no text for them.
 */
export function matchesFilter(parked: FilteredFields, filter: ParkedFilter | undefined): boolean {
  if (!filter) return true;
  if (filter.from !== undefined || filter.to !== undefined) {
    const at = parked.parkedAt === null ? Number.NaN : Date.parse(parked.parkedAt);
    if (!Number.isFinite(at)) return false;
    if (filter.from !== undefined && at < Date.parse(filter.from)) return false;
    if (filter.to !== undefined && at > Date.parse(filter.to)) return false;
  }
  if (filter.reasonText !== undefined && !contains(parked.reason, filter.reasonText)) return false;
  if (filter.messageIdText !== undefined && !contains(parked.messageId, filter.messageIdText)) return false;
  return true;
}

function contains(text: string | null, part: string): boolean {
  return text !== null && text.toLowerCase().includes(part.toLowerCase());
}

/** The window a search or an action on its result looks at: the asked one, else the default, never past the maximum. */
export function searchWindow(asked: unknown): number {
  const n = typeof asked === 'string' && /^\d+$/.test(asked) ? Number(asked) : typeof asked === 'number' ? Math.floor(asked) : DEFAULT_SEARCH_WINDOW;
  return Math.max(1, Math.min(Number.isFinite(n) && n > 0 ? n : DEFAULT_SEARCH_WINDOW, MAX_SEARCH_WINDOW));
}

/** The filter in a person's words, for the audit log and the sidebar: `reason ~ "timeout", parked 05:00 … 06:00`. */
export function describeFilter(filter: ParkedFilter): string {
  const parts: string[] = [];
  if (filter.reasonText !== undefined) parts.push(`reason contains ${JSON.stringify(filter.reasonText)}`);
  if (filter.messageIdText !== undefined) parts.push(`message id contains ${JSON.stringify(filter.messageIdText)}`);
  if (filter.from !== undefined || filter.to !== undefined) parts.push(`parked ${filter.from ?? '…'} to ${filter.to ?? '…'}`);
  return parts.length > 0 ? parts.join(', ') : 'every message';
}
