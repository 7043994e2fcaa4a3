/**
 * retry-postgres's properties: its number fields, and its settings read from its (env-resolved) saved definition. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import { readNumberFields, type NumberField, type NumberValues } from '../../lib/rules/number-fields';
import { stringProp } from '../shared/node-red';

export const POSTGRES_NUMBERS = {
  port: { label: 'port', fallback: 5432, min: 1, max: 65535, integer: true },
  poolSize: { label: 'connections', fallback: 10, min: 1, max: 1000, integer: true },
} as const satisfies Record<string, NumberField>;

export interface PostgresProperties {
  /** The node's name ('' for none). */
  name: string;
  /** A connection string ('' for none: host and the rest). */
  url: string;
  host: string | undefined;
  database: string | undefined;
  /** Its numbers; a bad one reads as its fallback and is one of `problems`. */
  numbers: NumberValues<typeof POSTGRES_NUMBERS>;
  /** The tls-config node's id ('' for none). */
  tlsConfig: string;
  /** TLS without a tls-config node (the server's certificate verified). */
  tls: boolean;
  /** What is wrong with its numbers. */
  problems: string[];
}

export function postgresProperties(def: Record<string, unknown>): PostgresProperties {
  const { values, problems } = readNumberFields(def, POSTGRES_NUMBERS);
  return {
    name: stringProp(def.name),
    url: stringProp(def.url),
    host: stringProp(def.host) || undefined,
    database: stringProp(def.database) || undefined,
    numbers: values,
    tlsConfig: stringProp(def.tlsConfig),
    tls: def.tls === true,
    problems,
  };
}
