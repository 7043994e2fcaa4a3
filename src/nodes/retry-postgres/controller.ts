/**
 * A retry-postgres node at work: one pool, open with the node; whether the database answers is pushed
 * to every user's status and logged once per change; the pool closes once its users are done. What it
 * listens to is removed when it closes.
 */
import { redactUrl } from '../../lib/connection';
import { PostgresDatabase, type DatabaseState, type PostgresSettings } from '../../lib/postgres';
import { translator } from '../shared/i18n';
import type { NodeAPI } from '../shared/node-red';
import type { RetryPostgresNode } from '../shared/postgres-node';
import { ConfigUsers, type ConfigUser } from '../shared/users';
import { databaseStatus } from './status';

export class PostgresController {
  private readonly users = new ConfigUsers();
  private lastLogged = '';

  /**
   * @param name the node's name (else what it connects to), for the errors its users log
   * @param url the connection string as written, for its display when there is no pool
   */
  constructor(
    private readonly RED: NodeAPI,
    private readonly node: RetryPostgresNode,
    private readonly name: string | undefined,
    settings: PostgresSettings,
    private readonly problems: string[],
    url: string,
  ) {
    node.problems = problems;
    node.database = problems.length === 0 ? new PostgresDatabase(settings) : undefined;
    node.display = node.database?.description ?? (url ? redactUrl(url) : (settings.host ?? 'PostgreSQL'));
    if (problems.length > 0) node.error(`PostgreSQL configuration not usable: ${problems.join('; ')}`);
    const t = translator(RED);
    node.databaseStatus = () => databaseStatus(node.database?.state, problems, t);
    node.register = (user) => this.register(user);
    node.deregister = (user) => this.users.remove(user);
    node.database?.on('state', this.onState);
    // See at once whether the database answers (its users' statuses say so).
    node.database?.ping().catch(() => undefined);
  }

  register(user: ConfigUser): void {
    this.users.add(user);
    user.status(this.node.databaseStatus());
    const { problems } = this;
    if (problems.length > 0) setImmediate(() => this.RED.nodes.getNode(user.id)?.error(`PostgreSQL '${this.name || this.node.display}' not usable: ${problems.join('; ')}`));
  }

  /** Its users (a deduplication store, the outbox nodes) may still be finishing: closes the pool after them. */
  async close(): Promise<void> {
    await this.users.whenUnused();
    await this.node.database?.close();
    this.node.database?.off('state', this.onState);
  }

  private readonly onState = (state: DatabaseState): void => {
    this.users.broadcast(this.node.databaseStatus());
    const line = state.phase === 'down' ? state.detail : state.phase === 'up' ? `connected to PostgreSQL ${this.node.display}` : '';
    if (!line || line === this.lastLogged) return;
    this.lastLogged = line;
    if (state.phase === 'up') this.node.log(line);
    else this.node.warn(line);
  };
}
