/**
 * retry-postgres's properties: its number fields. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import type { NumberField } from '../../lib/rules/number-fields';

export const POSTGRES_NUMBERS = {
  port: { label: 'port', fallback: 5432, min: 1, max: 65535, integer: true },
  poolSize: { label: 'connections', fallback: 10, min: 1, max: 1000, integer: true },
} as const satisfies Record<string, NumberField>;
