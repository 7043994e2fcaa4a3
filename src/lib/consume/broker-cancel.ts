/**
 * Why the broker cancelled a consumer (basic.cancel carries no reason): its queue was deleted, a
 * delivery was held past the queue's consumer timeout (RabbitMQ 4.3+ quorum queues cancel instead of
 * closing the channel), or — the queue still there, nothing held that long — its leader moved. Found
 * with passive checks right after the cancel, on a channel of their own; the wording is pure.
 */
import { AMQP_CODE, formatDelay, type ChannelRunner, type DefinitionReader, type RetryTopologyConfig } from '../topology';

/** What the broker's cancel was, as far as the package can tell (`unknown`: the checks could not run). */
export interface BrokerCancel {
  cause: 'deleted' | 'consumer-timeout' | 'leader-moved' | 'unknown';
  /** `consumer-timeout`: the timeout in ms, when the queue's arguments name it (else the broker's `consumer_timeout`). */
  timeoutMs?: number;
}

/** RabbitMQ's `consumer_timeout` when its configuration does not set one. */
export const BROKER_DEFAULT_CONSUMER_TIMEOUT_MS = 1_800_000;

/**
 * When a passive check finds the queue still there, it is looked at again after these waits (ms): on
 * RabbitMQ 4.3 a deleted quorum queue's cancel arrives a few ms before the queue is gone.
 */
export const RECHECK_AFTER_CANCEL_MS: readonly number[] = [200, 1000];

/**
 * How much later than the broker a delivery's clock starts here (it travels, and waits for the event
 * loop): a delivery held this much less than the timeout still counts as timed out.
 */
export const TIMEOUT_SLACK_MS = 1000;

/** Whether a delivery held `heldMs` ran past the consumer timeout (the broker's default when undefined). */
function heldPast(heldMs: number | undefined, timeoutMs: number | undefined): boolean {
  return heldMs !== undefined && heldMs + TIMEOUT_SLACK_MS >= (timeoutMs ?? BROKER_DEFAULT_CONSUMER_TIMEOUT_MS);
}

/** The cause, from what the checks found: the queue gone, or the longest-held unsettled delivery against the timeout. */
export function cancelCause(found: { exists: boolean | undefined; heldMs: number | undefined; timeoutMs: number | undefined }): BrokerCancel {
  const { exists, heldMs, timeoutMs } = found;
  if (exists === false) return { cause: 'deleted' };
  if (heldPast(heldMs, timeoutMs)) return timeoutMs === undefined ? { cause: 'consumer-timeout' } : { cause: 'consumer-timeout', timeoutMs };
  return exists === true ? { cause: 'leader-moved' } : { cause: 'unknown' };
}

/** The queue's `x-consumer-timeout` (ms): the configuration's argument, else the broker's (management API), else undefined. */
export function consumerTimeoutOf(args: Record<string, unknown> | undefined): number | undefined {
  const value = args?.['x-consumer-timeout'];
  return typeof value === 'number' && value > 0 ? value : undefined;
}

/** What the log says: the cause and what the consumer does next. */
export function brokerCancelText(mainQueue: string, cancel: BrokerCancel, mode: RetryTopologyConfig['mode']): string {
  const head = `the broker cancelled the consumer of queue '${mainQueue}'`;
  const back = 'its unsettled messages go back to the queue; consuming again';
  switch (cancel.cause) {
    case 'deleted':
      return `${head}: the queue was deleted (its messages with it); ${mode === 'declare' ? 'declaring it again' : 'waiting for it to be declared again (check mode never creates it)'}`;
    case 'consumer-timeout': {
      const timeout = cancel.timeoutMs === undefined ? `the broker's consumer_timeout (${formatDelay(BROKER_DEFAULT_CONSUMER_TIMEOUT_MS)} unless configured)` : `its consumer timeout of ${formatDelay(cancel.timeoutMs)}`;
      return `${head}: a message was held unsettled longer than ${timeout}; ${back}`;
    }
    case 'leader-moved':
      return `${head}: the queue is still there and no message was held past its consumer timeout, so its leader moved; ${back}`;
    default:
      return `${head} (the queue was deleted, its leader moved, or on RabbitMQ 4.3+ a quorum queue's consumer timeout: a message held longer than the timeout); ${back}`;
  }
}

/** What the checks need (a consumer session's options have it): throwaway channels, the configured topology, the management API when set, a way to wait. */
export interface CancelCheck {
  connection: { withThrowawayChannel: ChannelRunner };
  topology: Pick<RetryTopologyConfig, 'mainQueue' | 'mainQueueArguments' | 'mode'>;
  definitionReader?: DefinitionReader;
  wait?: (ms: number) => Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the queue exists (a passive check), looked at again after each of `waits` while it does; undefined when a check fails otherwise. */
async function queueExists(check: CancelCheck, waits: readonly number[]): Promise<boolean | undefined> {
  const { connection, topology, wait = sleep } = check;
  const once = (): Promise<boolean | undefined> =>
    connection.withThrowawayChannel(async (channel) => {
      await channel.checkQueue(topology.mainQueue);
      return true;
    }).catch((err: unknown) => ((err as { code?: unknown }).code === AMQP_CODE.NOT_FOUND ? false : undefined));
  let exists = await once();
  for (const ms of waits) {
    if (exists !== true) break;
    await wait(ms);
    exists = await once();
  }
  return exists;
}

/**
 * Finds why the consumer was cancelled, and the words for it; `heldSince`: when its longest-held
 * unsettled delivery arrived (undefined: none). A delivery held past the timeout needs no second look at the queue.
 */
export async function findCancelCause(check: CancelCheck, heldSince: number | undefined, now = Date.now()): Promise<{ cancelled: BrokerCancel; text: string }> {
  const { topology, definitionReader: reader } = check;
  const heldMs = heldSince === undefined ? undefined : now - heldSince;
  let timeoutMs = consumerTimeoutOf(topology.mainQueueArguments);
  if (timeoutMs === undefined && reader) timeoutMs = consumerTimeoutOf(await reader.queueArguments(topology.mainQueue).catch(() => undefined));
  const exists = await queueExists(check, heldPast(heldMs, timeoutMs) ? [] : RECHECK_AFTER_CANCEL_MS);
  const cancelled = cancelCause({ exists, heldMs, timeoutMs });
  return { cancelled, text: brokerCancelText(topology.mainQueue, cancelled, topology.mode) };
}
