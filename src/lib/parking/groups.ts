/**
 * Groups of parked messages: the parking queue by folded park reason (fold.ts), with each group's
 * count, first and last park time and how many of its messages were replayed before. A group holds
 * counts and times only, never a message, so a queue of any size is grouped in little memory.
 */
import type { BrokerConnection } from '../connection';
import { browseQueue } from './browse';
import { foldReason } from './fold';
import { describeParked, parkedSummary, type ParkedMessage } from './view';

/** One group of parked messages. */
export interface ParkedGroup {
  /** The folded park reason: what selects the group (`group` in a selection). */
  key: string;
  /** The first reason seen in full, as an example of the group's reasons (null: none given). */
  example: string | null;
  count: number;
  /** Earliest and latest park time (ISO), null when none says. */
  firstAt: string | null;
  lastAt: string | null;
  /** Messages of the group that were replayed before and parked again. */
  replayed: number;
}

/** The most distinct groups kept: reasons that do not fold (e.g. a whole payload in them) must not grow without end. */
export const MAX_GROUPS = 1000;

/** Tallies parked messages into groups. Pure. */
export class GroupTally {
  private readonly groups = new Map<string, ParkedGroup>();
  /** Messages whose group was past MAX_GROUPS. */
  ungrouped = 0;

  add(reason: string | null, parkedAt: string | null, replays: number): void {
    const key = foldReason(reason);
    let group = this.groups.get(key);
    if (!group) {
      if (this.groups.size >= MAX_GROUPS) {
        this.ungrouped += 1;
        return;
      }
      group = { key, example: reason, count: 0, firstAt: null, lastAt: null, replayed: 0 };
      this.groups.set(key, group);
    }
    group.count += 1;
    if (replays > 0) group.replayed += 1;
    if (parkedAt !== null) {
      // ISO times in UTC compare as text; the broker's and the package's are both.
      if (group.firstAt === null || parkedAt < group.firstAt) group.firstAt = parkedAt;
      if (group.lastAt === null || parkedAt > group.lastAt) group.lastAt = parkedAt;
    }
  }

  /** The groups, largest first (then by key, so the order is stable). */
  list(): ParkedGroup[] {
    return [...this.groups.values()].sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
}

export interface GroupResult {
  groups: ParkedGroup[];
  /** Messages grouped (read). */
  grouped: number;
  /** Messages past MAX_GROUPS distinct groups, counted but in no group. */
  ungrouped: number;
  /** Messages in the parking queue when the read started. */
  total: number;
}

/** The parking queue's first `limit` messages by group, read without consuming them (browse.ts). */
export async function groupParked(connection: BrokerConnection, queue: string, options: { limit: number }): Promise<GroupResult> {
  const tally = new GroupTally();
  const result = await browseQueue(connection, queue, options.limit, (message) => {
    const summary = parkedSummary(message.properties.headers);
    tally.add(summary.reason, summary.parkedAt, summary.replays);
    return false;
  });
  return { groups: tally.list(), grouped: result.read, ungrouped: tally.ungrouped, total: result.depth };
}

/**
 * A page of one group's messages as a read passes the queue's messages by: the `limit` after the first
 * `offset` of the group, and how many the group has in all (`count`). Pure.
 */
export class GroupPage<T> {
  readonly messages: T[] = [];
  /** The group's messages read so far. */
  count = 0;

  constructor(
    private readonly key: string,
    private readonly offset: number,
    private readonly limit: number,
  ) {}

  /** One message read, by its park reason; `describe` makes its entry when it falls in the page. */
  add(reason: string | null, describe: () => T): void {
    if (foldReason(reason) !== this.key) return;
    this.count += 1;
    if (this.count > this.offset && this.messages.length < this.limit) this.messages.push(describe());
  }

  /** Whether the group has messages after the page. */
  get more(): boolean {
    return this.count > this.offset + this.messages.length;
  }
}

/** A page of one group's messages; `count`: the group's messages in the queue, `total`: the whole queue's. */
export interface GroupPageResult {
  messages: ParkedMessage[];
  /** The group has messages after this page. */
  more: boolean;
  /** Messages of the group in the parking queue (read when the read started). */
  count: number;
  /** Messages in the whole parking queue when the read started. */
  total: number;
}

/**
 * A page of one group's messages (as a peek lists them, positions in the whole queue), read without
 * consuming: the `limit` after the first `offset` of the group. The read goes through the queue (up
 * to `scanLimit`) to count the group's messages.
 */
export async function peekGroup(
  connection: BrokerConnection,
  queue: string,
  key: string,
  options: { offset: number; limit: number; previewBytes: number; scanLimit: number },
): Promise<GroupPageResult> {
  const page = new GroupPage<ParkedMessage>(key, options.offset, options.limit);
  const result = await browseQueue(connection, queue, options.scanLimit, (message, position) => {
    page.add(parkedSummary(message.properties.headers).reason, () => describeParked(message, position, options.previewBytes));
    return false;
  });
  return { messages: page.messages, more: page.more, count: page.count, total: result.depth };
}
