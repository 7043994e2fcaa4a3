/**
 * retry-settle's properties: the values of its action. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
export const SETTLE_ACTIONS = ['ack', 'retry'] as const;
