/**
 * message — what a message carries and becomes (pure): attempts counted from `x-death` and the package's
 * own headers, bodies decoded to `msg.payload` and back, `msg.amqp`, failure details, and the copies
 * the package republishes (retry, park).
 */
export {
  ATTEMPT_HEADER,
  FIRST_SEEN_HEADER,
  NOT_BEFORE_HEADER,
  ORIGINAL_EXCHANGE_HEADER,
  ORIGINAL_ROUTING_KEY_HEADER,
  attemptHeaderCount,
  attemptsExhausted,
  failedAttempts,
  findDeath,
  firstSeenMs,
  malformedDeathHeader,
  originalRoute,
  readDeaths,
  retryInfo,
  type DeathRecord,
  type RetryInfo,
} from './attempts';
export { DELIVERY_COUNT_HEADER, deliveryCountRetryInfo } from './delivery-count';
export { DEFAULT_PARK_REASON, PARK_HEADERS, clampReason, parkedPublishOptions, retryPublishOptions, withoutBrokerCounts, type ParkInput } from './copies';
export { FAILURE_HEADERS, FIRST_FAILURE_HEADER, errorMessage, errorName, failureDetails, failureHeaders, firstFailureMs, truncateStack, type FailureDetails } from './failure';
export {
  CONSUMED_PROPERTY_KEYS,
  COPIED_PROPERTY_KEYS,
  PUBLISH_PROPERTY_KEYS,
  copiedProperties,
  copyPublishOptions,
  pickDefined,
  toAmqpInfo,
  type AmqpInfo,
  type DeliveredMessage,
} from './message-info';
export { charsetOf, decodePayload, decodeText, encodePayload, isJsonContentType, isTextContentType, type DecodeMode, type DecodeResult } from './payload';
