/** How much may wait to be published under back-pressure, and the defaults. Pure. */
export interface PublishLimits {
  maxMessages: number;
  maxBytes: number;
}

export const DEFAULT_PUBLISH_LIMITS: Readonly<PublishLimits> = { maxMessages: 1000, maxBytes: 16 * 1024 * 1024 };
