/**
 * Replaying parked messages once their cause is fixed: each one is published back to where it was
 * first published (confirmed, mandatory) and only then removed from the parking queue.
 */
import type { Channel, GetMessage, MessageProperties, Options } from 'amqplib';
import { ATTEMPT_HEADER, FIRST_SEEN_HEADER, readDeaths } from './attempts';
import type { BrokerConnection } from './broker-connection';
import { copiedProperties, PARK_HEADERS } from './parking';
import type { RetryTopologyConfig } from './topology';

/** Counts how often a message was replayed, so a message parked again and again shows it. */
export const REPLAY_HEADER = 'park-replayed';

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
 * The replayed copy: original properties and headers without the park headers; with `resetAttempts`
 * also without the attempt history, so the message gets its full number of attempts again.
 */
export function replayPublishOptions(properties: MessageProperties, resetAttempts: boolean): Options.Publish {
  const dropped = new Set<string>(Object.values(PARK_HEADERS).filter((name) => name !== ATTEMPT_HEADER));
  if (resetAttempts) for (const name of [ATTEMPT_HEADER, FIRST_SEEN_HEADER, ...BROKER_DEATH_HEADERS]) dropped.add(name);
  const original = properties.headers ?? {};
  const headers = Object.fromEntries(Object.entries(original).filter(([name]) => !dropped.has(name)));
  const previous = Number(original[REPLAY_HEADER]);
  headers[REPLAY_HEADER] = Number.isFinite(previous) ? previous + 1 : 1;
  return Object.assign(copiedProperties(properties), { headers, persistent: true, mandatory: true });
}

export interface ReplayResult {
  replayed: number;
  /** Messages still in the parking queue afterwards. */
  remaining: number;
}

/**
 * Replays up to `max` parked messages, one at a time: get, publish confirmed, ack. A message that
 * cannot be published stays parked (nack with requeue) and the replay stops with the error.
 */
export async function replayParked(
  connection: BrokerConnection,
  topology: RetryTopologyConfig,
  options: { max: number; resetAttempts: boolean },
): Promise<ReplayResult> {
  const publisher = await connection.publisher('replay');
  const channel: Channel = await connection.createChannel();
  let replayed = 0;
  try {
    while (replayed < options.max) {
      const message: GetMessage | false = await channel.get(topology.parkingQueue, { noAck: false });
      if (message === false) break;
      const target = replayTarget(message.properties.headers, topology);
      try {
        await publisher.publish(target.exchange, target.routingKey, message.content, replayPublishOptions(message.properties, options.resetAttempts));
      } catch (err) {
        channel.nack(message, false, true);
        throw new Error(`replay stopped after ${replayed} message(s): ${(err as Error).message}; the message stays parked`, { cause: err });
      }
      channel.ack(message);
      replayed += 1;
    }
    const { messageCount } = await channel.checkQueue(topology.parkingQueue);
    return { replayed, remaining: messageCount };
  } finally {
    await channel.close().catch(() => undefined);
  }
}
