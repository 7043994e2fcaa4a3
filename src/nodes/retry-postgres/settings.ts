/**
 * What a PostgreSQL node's definition asks for: a connection string or host / port / database / user,
 * the password in Node-RED credentials, TLS through the core `tls-config` node; or why it cannot be used.
 */
import { isUnresolvedEnv } from '../../lib/connection';
import { parseConnectionString, type PostgresSettings } from '../../lib/postgres';
import type { Node, NodeAPI } from '../shared/node-red';
import type { PostgresProperties } from './properties';
import { usableTlsConfig } from '../shared/tls-config';

/** The pool's settings from the node's properties, and what stops them from working. */
export function postgresSettings(RED: NodeAPI, node: Node, props: PostgresProperties): { settings: PostgresSettings; problems: string[] } {
  const problems = [...props.problems];
  const { url } = props;
  const settings: PostgresSettings = {
    host: props.host,
    port: props.numbers.port,
    database: props.database,
    user: node.credentials?.user || undefined,
    password: node.credentials?.password || undefined,
    maxConnections: props.numbers.poolSize,
    applicationName: `node-red ${props.name || node.id}`,
  };
  if (url !== '' && !isUnresolvedEnv(url)) {
    const parsed = parseConnectionString(url);
    if ('problem' in parsed) problems.push(parsed.problem);
    else settings.connectionString = url;
  } else if (url !== '') {
    node.warn(`database URL ${url}: environment variable not set, using host ${settings.host ?? 'localhost'}`);
  }
  if (!settings.connectionString && !settings.host) problems.push('set a database URL or a host');
  const tlsId = props.tlsConfig;
  if (tlsId !== '') {
    try {
      settings.tls = usableTlsConfig(RED, tlsId).addTLSOptions({});
    } catch (err) {
      problems.push((err as Error).message);
    }
  } else if (props.tls) {
    settings.tls = { rejectUnauthorized: true };
  }
  return { settings, problems };
}
