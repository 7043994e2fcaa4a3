/**
 * Replaying parked messages once their cause is fixed: each one is published back to where it was
 * first published (confirmed, mandatory) and only then removed from the parking queue.
 */
import type { GetMessage, MessageProperties, Options } from 'amqplib';
import { ATTEMPT_HEADER, copyPublishOptions, FAILURE_HEADERS, FIRST_FAILURE_HEADER, FIRST_SEEN_HEADER, ORIGINAL_EXCHANGE_HEADER, ORIGINAL_ROUTING_KEY_HEADER, PARK_HEADERS, readDeaths } from '../message';
import type { BrokerConnection } from '../connection';
import { MAX_SCAN, scanQueue } from './scan';
import { describeParked, isEmptySelection, matchesSelection, REPLAY_HEADER, REPLAY_STAMP_HEADERS, type ParkedMessage, type ParkedSelection } from './view';
import { editedPublishOptions, type EditedBy, type ParkedEdit } from './edit';
import { messages } from '../observe';
import type { RetryTopologyConfig } from '../topology';
import { messagingAttributes, setTrace, spanName, traceOf, type MessageTracer } from '../trace';

export { REPLAY_HEADER, REPLAY_STAMP_HEADERS };

const BROKER_DEATH_HEADERS = ['x-death', 'x-first-death-exchange', 'x-first-death-queue', 'x-first-death-reason', 'x-last-death-exchange', 'x-last-death-queue', 'x-last-death-reason'];

/**
 * Where a parked message goes back to: the park headers, else the broker's record of the main queue
 * (a message the broker dead-lettered, e.g. at a quorum delivery limit), else the main exchange with
 * the first routing key, else the main queue through the default exchange.
 */
export function replayTarget(headers: Record<string, unknown> | undefined, topology: Pick<RetryTopologyConfig, 'mainExchange' | 'mainQueue' | 'routingKeys'>): { exchange: string; routingKey: string } {
  const exchange = headers?.[PARK_HEADERS.originalExchange];
  const routingKey = headers?.[PARK_HEADERS.originalRoutingKey];
  if (typeof exchange === 'string' && typeof routingKey === 'string') return { exchange, routingKey };
  const death = readDeaths(headers).find((d) => d.queue === topology.mainQueue);
  if (death) return { exchange: death.exchange, routingKey: death.routingKeys[0] ?? topology.mainQueue };
  if (topology.mainExchange !== '') return { exchange: topology.mainExchange, routingKey: topology.routingKeys[0] ?? '' };
  return { exchange: '', routingKey: topology.mainQueue };
}

/**
 * The replayed copy: original properties and headers without the park headers and the retry route's
 * record of the original route (the copy is published to that route itself); with `resetAttempts`
 * also without the attempt history, so the message gets its full number of attempts again.
 */
export function replayPublishOptions(properties: MessageProperties, resetAttempts: boolean, stamp?: ReplayStamp): Options.Publish {
  const dropped = new Set<string>([...Object.values(PARK_HEADERS), ...Object.values(FAILURE_HEADERS)].filter((name) => name !== ATTEMPT_HEADER));
  dropped.add(ORIGINAL_EXCHANGE_HEADER).add(ORIGINAL_ROUTING_KEY_HEADER);
  if (resetAttempts) for (const name of [ATTEMPT_HEADER, FIRST_SEEN_HEADER, FIRST_FAILURE_HEADER, ...BROKER_DEATH_HEADERS]) dropped.add(name);
  const original = properties.headers ?? {};
  // A copy says this replay only: no stale redirect of an earlier one.
  if (stamp) for (const name of Object.values(REPLAY_STAMP_HEADERS)) dropped.add(name);
  const headers = Object.fromEntries(Object.entries(original).filter(([name]) => !dropped.has(name)));
  const previous = Number(original[REPLAY_HEADER]);
  headers[REPLAY_HEADER] = Number.isFinite(previous) ? previous + 1 : 1;
  if (stamp) Object.assign(headers, stampHeaders(stamp));
  return copyPublishOptions(properties, headers, true);
}

/** Who replayed a message, when, in which run, and where to when not back to where it came from. */
export interface ReplayStamp {
  by: string;
  /** ISO time of the replay. */
  at: string;
  /** One id per replay run (a paced replay's job id): a copy parked again carries it, so the run finds it. */
  replayId: string;
  redirect?: ReplayDestination;
}

export interface ReplayDestination {
  exchange: string;
  routingKey: string;
}

export function stampHeaders(stamp: ReplayStamp): Record<string, string> {
  const headers: Record<string, string> = { [REPLAY_STAMP_HEADERS.by]: stamp.by, [REPLAY_STAMP_HEADERS.at]: stamp.at, [REPLAY_STAMP_HEADERS.replayId]: stamp.replayId };
  if (stamp.redirect) headers[REPLAY_STAMP_HEADERS.redirectedTo] = `${stamp.redirect.exchange === '' ? '(default exchange)' : stamp.redirect.exchange} / ${stamp.redirect.routingKey}`;
  return headers;
}

/** A replay that stopped part way: `replayed` messages went before the one that could not. */
export class ReplayStopped extends Error {
  constructor(
    message: string,
    readonly replayed: number,
    cause: unknown,
  ) {
    super(message, { cause });
    this.name = 'ReplayStopped';
  }
}

/** Makes the copy other than the original (edit and replay): its body and publish options, from the message and the replay's options. */
export type Rewrite = (message: GetMessage, replay: Options.Publish) => { content: Buffer; publish: Options.Publish };

export interface ReplayResult {
  replayed: number;
  /** Messages still in the parking queue afterwards. */
  remaining: number;
  /** With a selection by messageId: the ids not found among the messages looked at. */
  notFound?: string[];
}

/**
 * Replays up to `max` parked messages (those matching `selection`, if given), one at a time: get,
 * publish confirmed, ack. Messages not selected are returned in place. A message that cannot be
 * published stays parked and the replay stops with the error. Messages parked again while the
 * replay runs are not replayed twice: it looks at no more than the queue held when it started.
 */
export async function replayParked(
  connection: BrokerConnection,
  topology: RetryTopologyConfig,
  options: {
    max: number;
    resetAttempts: boolean;
    selection?: ParkedSelection;
    scanLimit?: number;
    onReplayed?: (parked: ParkedMessage) => void;
    tracer?: MessageTracer;
    /** Who, when, which run; with `redirect` every copy goes there instead of back where it came from. */
    stamp?: ReplayStamp;
    /** Called before each publish: resolves false to stop there (a paced replay waits here, a cancel says false). */
    before?: () => Promise<boolean>;
    /** Makes the copy other than the original (edit and replay). */
    rewrite?: Rewrite;
  },
): Promise<ReplayResult> {
  const publisher = connection.publisher('replay');
  const found = new Set<string>();
  let replayed = 0;
  let failure: unknown;
  // Without a selection every message read is replayed: read no more than `max`.
  const scanLimit = options.scanLimit ?? MAX_SCAN;
  const limit = isEmptySelection(options.selection) ? Math.min(options.max, scanLimit) : scanLimit;
  const result = await scanQueue(connection, topology.parkingQueue, limit, async (message, position) => {
    if (replayed >= options.max) return 'stop';
    const parked = describeParked(message, position, 0);
    if (!matchesSelection(parked, options.selection)) return 'keep';
    if (options.before !== undefined && !(await options.before())) return 'stop';
    if (parked.messageId !== null) found.add(parked.messageId);
    const target = options.stamp?.redirect ?? replayTarget(message.properties.headers, topology);
    const replay = replayPublishOptions(message.properties, options.resetAttempts, options.stamp && { ...options.stamp, at: new Date().toISOString() });
    const copy = options.rewrite?.(message, replay) ?? { content: message.content, publish: replay };
    const publish = copy.publish;
    // A replay span, a child of the parked message's trace context, whose context the replayed copy carries.
    const span = options.tracer?.start(spanName('replay', target.exchange), 'producer', messagingAttributes('replay', target.exchange, target.routingKey, message), traceOf(publish.headers as Record<string, unknown> | undefined));
    if (span !== undefined) setTrace((publish.headers ??= {}) as Record<string, unknown>, span.trace);
    try {
      await publisher.publish(target.exchange, target.routingKey, copy.content, publish);
    } catch (err) {
      failure = err;
      span?.fail(err);
      return 'stop';
    } finally {
      span?.end();
    }
    replayed += 1;
    options.onReplayed?.(parked);
    return 'remove';
  });
  if (failure !== undefined) {
    throw new ReplayStopped(`replay stopped after ${messages(replayed)}: ${(failure as Error).message}; the message stays parked`, replayed, failure);
  }
  const ids = options.selection?.messageIds;
  return ids === undefined ? { replayed, remaining: result.remaining } : { replayed, remaining: result.remaining, notFound: ids.filter((id) => !found.has(id)) };
}

/**
 * Edit and replay of one parked message (by messageId): replays it as replayParked does — published
 * confirmed to where it came from, then removed from parking — as the edited copy (edit.ts). The
 * result says `replayed: 0` and `notFound` when it is no longer parked.
 */
export async function replayEdited(
  connection: BrokerConnection,
  topology: RetryTopologyConfig,
  options: { messageId: string; edit: ParkedEdit; by: EditedBy; resetAttempts: boolean; onReplayed?: (parked: ParkedMessage) => void; tracer?: MessageTracer },
): Promise<ReplayResult> {
  const rewrite: Rewrite = (message, replay) => ({ content: Buffer.from(options.edit.body, 'utf8'), publish: editedPublishOptions(replay, message.properties, options.edit, options.by) });
  return replayParked(connection, topology, { max: 1, resetAttempts: options.resetAttempts, selection: { messageIds: [options.messageId] }, onReplayed: options.onReplayed, tracer: options.tracer, rewrite });
}
