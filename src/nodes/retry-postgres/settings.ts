/**
 * What a PostgreSQL node's definition asks for: a connection string or host / port / database / user,
 * the password in Node-RED credentials, TLS through the core `tls-config` node; or why it cannot be used.
 */
import { isUnresolvedEnv } from '../../lib/connection';
import { parseConnectionString, type PostgresSettings } from '../../lib/postgres';
import { readNumberFields } from '../../lib/rules';
import { stringProp, type Node, type NodeAPI } from '../shared/node-red';
import { POSTGRES_NUMBERS } from './properties';
import { usableTlsConfig } from '../shared/tls-config';

/** The pool's settings from the (env-resolved) definition, and what stops them from working. */
export function postgresSettings(RED: NodeAPI, node: Node, def: Record<string, unknown>): { settings: PostgresSettings; problems: string[] } {
  const numbers = readNumberFields(def, POSTGRES_NUMBERS);
  const problems = [...numbers.problems];
  const url = stringProp(def.url).trim();
  const settings: PostgresSettings = {
    host: stringProp(def.host).trim() || undefined,
    port: numbers.values.port,
    database: stringProp(def.database).trim() || undefined,
    user: node.credentials?.user || undefined,
    password: node.credentials?.password || undefined,
    maxConnections: numbers.values.poolSize,
    applicationName: `node-red ${stringProp(def.name) || node.id}`,
  };
  if (url !== '' && !isUnresolvedEnv(url)) {
    const parsed = parseConnectionString(url);
    if ('problem' in parsed) problems.push(parsed.problem);
    else settings.connectionString = url;
  } else if (url !== '') {
    node.warn(`database URL ${url}: environment variable not set, using host ${settings.host ?? 'localhost'}`);
  }
  if (!settings.connectionString && !settings.host) problems.push('set a database URL or a host');
  const tlsId = stringProp(def.tlsConfig);
  if (tlsId !== '') {
    try {
      settings.tls = usableTlsConfig(RED, tlsId).addTLSOptions({});
    } catch (err) {
      problems.push((err as Error).message);
    }
  } else if (def.tls === true) {
    settings.tls = { rejectUnauthorized: true };
  }
  return { settings, problems };
}
