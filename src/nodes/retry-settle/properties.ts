/**
 * retry-settle's properties: the values of its action. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
export const SETTLE_ACTIONS = ['ack', 'retry'] as const;

/** The node's settings, read from its saved definition. */
export interface RetrySettleSettings {
  /** Anything but `retry` acks (a node saved before the action existed acked). */
  action: (typeof SETTLE_ACTIONS)[number];
  /** The retry reason when the msg has no error. */
  reason: string;
  /** Batch mode: a retried batch is split in halves until the failing items are found. */
  bisect: boolean;
}

export function retrySettleSettings(def: Record<string, unknown>): RetrySettleSettings {
  return { action: def.action === 'retry' ? 'retry' : 'ack', reason: typeof def.reason === 'string' ? def.reason.trim() : '', bisect: def.bisect === true };
}
