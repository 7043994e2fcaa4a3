/**
 * One PostgreSQL database as the package uses it: a pool (owned here, closed here), whether it
 * answers (`state`, with `up` / `down` events and a probe with capped backoff while it does not),
 * transactions, and a listener for NOTIFY that comes back after a lost connection.
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { postgresErrorText, postgresProblem, type PostgresProblem } from './errors';
import { describeDatabase, poolConfig, type PostgresSettings } from './settings';

/**
 * A statement: its text, or its text and a name (a prepared statement: parsed and planned once per
 * connection, then only bound and executed).
 */
export type Statement = string | { name: string; text: string };

export type QueryResult = pg.QueryResult;

/** What runs a query: the pool, or one client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: Statement, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * Statements without parameters that go in the round trips of a transaction's BEGIN and COMMIT (one
 * simple query each, with its statements in order; an error in one skips the rest and the
 * transaction is rolled back).
 */
export interface TransactionOptions<T> {
  /** Opens the transaction: `BEGIN` (the default) and what follows it; the last statement's result is `work`'s `opened`. */
  begin?: string;
  /** Given what `work` resolved with, statements run before the COMMIT (undefined: none). */
  end?: (result: T) => string | undefined;
}

/** A simple query of several statements answers with one result each: the last one. */
function lastResult(answer: pg.QueryResult | pg.QueryResult[]): pg.QueryResult {
  return Array.isArray(answer) ? (answer[answer.length - 1] as pg.QueryResult) : answer;
}

export type DatabaseState = { phase: 'connecting' } | { phase: 'up' } | { phase: 'down'; problem: PostgresProblem; detail: string } | { phase: 'closed' };

export interface DatabaseEvents {
  state: [DatabaseState];
}

export class PostgresDatabase extends EventEmitter<DatabaseEvents> implements Queryable {
  /** Names the database without secrets: `app@db:5432/orders`. */
  readonly description: string;
  private readonly pool: pg.Pool;
  private current: DatabaseState = { phase: 'connecting' };
  private probeTimer: NodeJS.Timeout | undefined;
  private probeAttempt = 0;

  constructor(private readonly settings: PostgresSettings) {
    super();
    this.description = describeDatabase(settings);
    this.pool = new pg.Pool(poolConfig(settings));
    // An idle client's connection dropped (server restart): the pool replaces it; say the database is down until a probe answers.
    this.pool.on('error', (err) => this.failed(err));
  }

  get state(): DatabaseState {
    return this.current;
  }

  /** Runs one statement on a pooled connection; a connection failure marks the database down (and probes). */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: Statement, params?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      const result = await this.pool.query<R>(sql, params);
      this.answered();
      return result;
    } catch (err) {
      this.failed(err);
      throw err;
    }
  }

  /**
   * Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it
   * throws. See TransactionOptions for statements that ride on the BEGIN's and the COMMIT's round trips.
   */
  async transaction<T>(work: (client: Queryable, opened: pg.QueryResult) => Promise<T>, options: TransactionOptions<T> = {}): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      this.failed(err);
      throw err;
    }
    let broken = false;
    // A checked-out client that loses its connection emits 'error': without a listener that is an
    // uncaught exception (it would stop Node-RED). The query in progress rejects as well.
    const lost = (err: Error): void => {
      broken = true;
      this.failed(err);
    };
    client.on('error', lost);
    try {
      const opened = lastResult(await client.query(options.begin ?? 'BEGIN'));
      const result = await work(client, opened);
      const ending = options.end?.(result);
      await client.query(ending === undefined ? 'COMMIT' : `${ending}; COMMIT`);
      this.answered();
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      this.failed(err);
      throw err;
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  /** Resolves when the database answers; rejects (and marks it down) otherwise. */
  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  /**
   * Listens for NOTIFY on `channel` on a connection of its own, reconnecting with backoff when it is
   * lost; `onReady` runs each time it listens again (a notification may have been missed meanwhile).
   */
  listen(channel: string, onNotify: (payload: string) => void, onReady: () => void): { close(): Promise<void> } {
    let client: pg.Client | undefined;
    let closed = false;
    let attempt = 0;
    let timer: NodeJS.Timeout | undefined;
    const connect = (): void => {
      const c = new pg.Client(poolConfig(this.settings));
      client = c;
      c.on('notification', (n) => {
        if (n.channel === channel) onNotify(n.payload ?? '');
      });
      c.on('error', () => retry(c));
      c.on('end', () => retry(c));
      c.connect()
        .then(() => c.query(`LISTEN "${channel.replace(/"/g, '""')}"`))
        .then(() => {
          if (closed) return void c.end().catch(() => undefined);
          attempt = 0;
          onReady();
        })
        .catch(() => retry(c));
    };
    const retry = (c: pg.Client): void => {
      if (closed || client !== c) return;
      client = undefined;
      c.removeAllListeners('end');
      void c.end().catch(() => undefined);
      timer = setTimeout(connect, Math.min(30_000, 500 * 2 ** attempt++));
      timer.unref?.();
    };
    connect();
    return {
      close: async () => {
        closed = true;
        clearTimeout(timer);
        const c = client;
        client = undefined;
        if (c) await c.end().catch(() => undefined);
      },
    };
  }

  /** Closes the pool and stops probing. */
  async close(): Promise<void> {
    clearTimeout(this.probeTimer);
    this.setState({ phase: 'closed' });
    await this.pool.end().catch(() => undefined);
  }

  private answered(): void {
    if (this.current.phase === 'up' || this.current.phase === 'closed') return;
    clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    this.probeAttempt = 0;
    this.setState({ phase: 'up' });
  }

  /** A failure that says the database is unreachable or refuses the login marks it down; an SQL error does not. */
  private failed(err: unknown): void {
    const problem = postgresProblem(err);
    if (problem !== 'unreachable' && problem !== 'auth') {
      if (this.current.phase === 'connecting') this.answered();
      return;
    }
    if (this.current.phase === 'closed') return;
    this.setState({ phase: 'down', problem, detail: postgresErrorText(err, this.description) });
    if (this.probeTimer === undefined) this.probe();
  }

  private probe(): void {
    const delay = Math.min(30_000, 1000 * 2 ** this.probeAttempt);
    this.probeAttempt += 1;
    this.probeTimer = setTimeout(() => {
      this.pool.query('SELECT 1').then(
        () => this.answered(),
        (err: unknown) => {
          this.probeTimer = undefined;
          this.failed(err);
        },
      );
    }, delay);
    this.probeTimer.unref?.();
  }

  private setState(state: DatabaseState): void {
    const same = state.phase === this.current.phase && (state.phase !== 'down' || (this.current.phase === 'down' && this.current.detail === state.detail));
    this.current = state;
    if (!same) this.emit('state', state);
  }
}
