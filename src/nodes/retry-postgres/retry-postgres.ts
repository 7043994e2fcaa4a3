/**
 * `retry-postgres` config node: one PostgreSQL database (a pool), shared by the deduplication store
 * and the outbox nodes. A connection string or host / port / database / user, the password in
 * Node-RED credentials, TLS through the core `tls-config` node. The pool opens with the node and
 * closes with it; whether the database answers is pushed to every user's status and logged once per change.
 */
import { isUnresolvedEnv, redactUrl, resolveEnvFields } from '../../lib/connection';
import { parseConnectionString, PostgresDatabase, type PostgresSettings } from '../../lib/postgres';
import { readNumberFields } from '../../lib/rules';
import { translator } from '../shared/i18n';
import { stringProp, type Node, type NodeAPI, type NodeDef } from '../shared/node-red';
import { databaseStatus, type RetryPostgresNode } from '../shared/postgres-node';
import { ResourceUsers } from '../shared/users';
import { NUMBER_FIELDS } from '../shared/properties';

interface TlsConfigNode extends Node {
  valid?: boolean;
  addTLSOptions(options: Record<string, unknown>): Record<string, unknown>;
}

export = function register(RED: NodeAPI): void {
  function RetryPostgres(this: RetryPostgresNode, saved: NodeDef): void {
    RED.nodes.createNode(this, saved);
    const node = this;
    const def = resolveEnvFields(saved, (name) => RED.util.evaluateNodeProperty(name, 'env', node));
    const t = translator(RED);
    const users = new ResourceUsers();
    const problems: string[] = [];
    const numbers = readNumberFields(def, NUMBER_FIELDS['retry-postgres']);
    problems.push(...numbers.problems);
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
    if (def.tls === true || tlsId !== '') {
      const tlsNode = tlsId === '' ? undefined : (RED.nodes.getNode(tlsId) as TlsConfigNode | null);
      if (tlsId !== '' && (!tlsNode || typeof tlsNode.addTLSOptions !== 'function')) problems.push('the selected TLS configuration does not exist (deleted or not deployed)');
      else if (tlsNode?.valid === false) problems.push(`TLS configuration '${tlsNode.name || tlsNode.id}' cannot be used: its certificate, key or CA file could not be read (see the log)`);
      else settings.tls = tlsNode ? tlsNode.addTLSOptions({}) : { rejectUnauthorized: true };
    }
    node.problems = problems;
    node.database = problems.length === 0 ? new PostgresDatabase(settings) : undefined;
    node.display = node.database?.description ?? (url ? redactUrl(url) : (settings.host ?? 'PostgreSQL'));
    if (problems.length > 0) node.error(`PostgreSQL configuration not usable: ${problems.join('; ')}`);

    node.databaseStatus = () => databaseStatus(node.database?.state, problems, t);
    const push = (): void => {
      const status = node.databaseStatus();
      for (const user of users.all.values()) user.status(status);
    };
    let lastLogged = '';
    node.database?.on('state', (state) => {
      push();
      const line = state.phase === 'down' ? state.detail : state.phase === 'up' ? `connected to PostgreSQL ${node.display}` : '';
      if (line && line !== lastLogged) {
        lastLogged = line;
        if (state.phase === 'up') node.log(line);
        else node.warn(line);
      }
    });
    // See at once whether the database answers (its users' statuses say so).
    node.database?.ping().catch(() => undefined);

    node.register = (user) => {
      users.add(user);
      user.status(node.databaseStatus());
      if (problems.length > 0) setImmediate(() => RED.nodes.getNode(user.id)?.error(`PostgreSQL '${stringProp(def.name) || node.display}' not usable: ${problems.join('; ')}`));
    };
    node.deregister = (user) => {
      users.remove(user);
    };
    node.on('close', (_removed, done) => {
      // Its users (a deduplication store, the outbox nodes) may still be finishing: close the pool after them.
      void users
        .whenUnused()
        .then(() => node.database?.close())
        .then(done, done);
    });
  }
  RED.nodes.registerType('retry-postgres', RetryPostgres as (this: Node, def: NodeDef) => void, {
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
  });
};
