/** amqp — the ground floor: what AMQP 0-9-1 can carry in properties and headers, and closing a channel without hanging. */
export { CHANNEL_CLOSE_TIMEOUT_MS, closeChannel } from './close-channel';
export { isoFromSeconds, plainHeaderValue, publishOptionsProblem } from './values';
