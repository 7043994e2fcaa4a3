/**
 * retry-publish's properties: the values of its mode. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
export const PUBLISH_MODES = ['publish', 'reply'] as const;
