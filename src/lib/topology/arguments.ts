/** The queue and exchange arguments the retry topology sets, and how argument values compare. Pure. */

export type QueueArguments = Record<string, unknown>;

export const DEAD_LETTER_EXCHANGE = 'x-dead-letter-exchange';
export const DEAD_LETTER_ROUTING_KEY = 'x-dead-letter-routing-key';
export const MESSAGE_TTL = 'x-message-ttl';
export const SINGLE_ACTIVE_CONSUMER = 'x-single-active-consumer';
export const ALTERNATE_EXCHANGE = 'alternate-exchange';

/** Numeric arguments compare by value: the broker treats `short 3000` and `long 3000` alike. */
export function sameArgumentValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' || typeof b === 'number') return Number(a) === Number(b);
  return a === b;
}

export function isQuorum(args: QueueArguments): boolean {
  return args['x-queue-type'] === 'quorum';
}
