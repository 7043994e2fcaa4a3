/**
 * publish — publishing that is done only when the broker took responsibility: confirm channels with
 * `mandatory` (one per purpose), and the bounded buffer publishes wait in under back-pressure.
 */
export { ConfirmPublisher, PublishError, describeChannelClose, type BatchMessage, type BatchSettle, type PublishFailure } from './confirm-publisher';
export { DEFAULT_PUBLISH_LIMITS, type PublishLimits } from './limits';
export { PublishBuffer, type PublishBufferState, type PublishRequest } from './publish-buffer';
export { Publishers, type Publisher, type PublisherOptions } from './publishers';
