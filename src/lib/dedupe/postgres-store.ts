/**
 * The deduplication store in a PostgreSQL table, shared by several Node-RED instances, and in the
 * same database as a flow's own writes if the user wants (then the record and the effect can share a
 * transaction). One row per (scope, key): `claimed` by an owner until the lease ends, or `done` until
 * the retention ends. A batch is one statement. Expired rows are deleted now and then by a sweep over
 * the table's pages, range by range, without an index on expires_at: so a complete, which changes
 * only state, owner and expires_at, is a HOT update (no new index entries).
 *
 *   CREATE TABLE rabbitmq_retry_dedupe (
 *     scope text NOT NULL, key text NOT NULL, state text NOT NULL, owner text,
 *     expires_at timestamptz NOT NULL, PRIMARY KEY (scope, key));
 */
import { declareOrCheckTable, postgresErrorText, postgresProblem, type ExpectedColumn, type ExpectedIndex, type Queryable, type TableName } from '../postgres';
import { answeredByScope, byScope, commonScope, distinctKeys } from './batch';
import { dedupeStatements, type DedupeStatements } from './postgres-statements';
import { CLAIMED, DONE, DedupeStoreError, type ClaimResult, type DedupeKey, type DedupeStore, type StoreExchange } from './store';
import { TableSweep, type SweepOptions } from './table-sweep';

/** The database as the store needs it: statements, and its name. */
export interface DedupeDatabase extends Queryable {
  readonly description: string;
  ping(): Promise<void>;
}

export interface PostgresStoreOptions {
  table: TableName;
  /** `declare` creates the table when missing; `check` only checks it. */
  mode: 'declare' | 'check';
  /** How often expired rows are deleted; default 60 s (0: never). */
  sweepMs?: number;
}

export const DEDUPE_COLUMNS: ExpectedColumn[] = [
  { name: 'scope', type: 'text' },
  { name: 'key', type: 'text' },
  { name: 'state', type: 'text' },
  { name: 'owner', type: 'text' },
  { name: 'expires_at', type: 'timestamp with time zone' },
];

/** Only the primary key: an index on (expires_at), which tables made by earlier versions have, is not needed (and may be dropped). */
export const DEDUPE_INDEXES: ExpectedIndex[] = [{ columns: ['scope', 'key'], unique: true, describe: 'primary key (scope, key)' }];

/** The statements that create the table (declare mode; also shown in the docs). */
export function dedupeTableDdl(table: TableName): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${table.sql} (
  scope text NOT NULL,
  key text NOT NULL,
  state text NOT NULL CHECK (state IN ('claimed', 'done')),
  owner text,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (scope, key)
)`,
  ];
}

export class PostgresDedupeStore implements DedupeStore {
  readonly description: string;
  /** btree rows up to ~2.7 kB; keys stay well below. */
  readonly maxKeyBytes = 1024;
  /**
   * Two calls in flight, not four: a call costs a commit whatever it carries, so fewer, bigger calls
   * cost less (bench dedupe-postgres, 5 alternating rounds: 1.00–1.14× as fast as 4, ~12 % less Node
   * CPU per message; 1 was faster still locally, but waits a round trip a turn on a remote database).
   */
  readonly maxInFlight = 2;
  private prepared: Promise<void> | undefined;
  /** The table was found missing or not as expected (the database answered): a ping checks it again. */
  private tableWrong = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly sweeper: TableSweep;
  private readonly t: string;
  /** The store's statements, prepared (named) for its table. */
  private readonly statements: DedupeStatements;

  constructor(
    private readonly db: DedupeDatabase,
    private readonly options: PostgresStoreOptions,
  ) {
    this.description = `postgres ${db.description} table ${options.table.sql}`;
    this.t = options.table.sql;
    this.statements = dedupeStatements(this.t);
    this.sweeper = new TableSweep(db, this.t);
  }

  /** Whether the store's table is in this database (the same pool): a write there may complete keys in its own transaction. */
  isIn(db: unknown): boolean {
    return this.db === db;
  }

  /** Creates or checks the table once (again after a failure); the sweep starts once it is there. */
  prepare(): Promise<void> {
    this.prepared ??= this.declareOrCheck().then(
      () => {
        this.tableWrong = false;
      },
      (err: unknown) => {
        this.prepared = undefined;
        throw err;
      },
    );
    return this.prepared;
  }

  /**
   * Whether the database answers; while the table is known to be wrong (missing, other columns), also
   * the table, checked again (or created, in declare mode): a store whose table cannot be used is not up.
   */
  async ping(): Promise<void> {
    await this.run(() => this.db.ping());
    if (this.tableWrong) await this.prepare();
  }

  async claim(keys: readonly DedupeKey[], owner: string, leaseMs: number): Promise<ClaimResult[]> {
    const { unique, at } = distinctKeys(keys);
    const lease = Math.max(1, Math.round(leaseMs));
    // A statement per scope (a gate's batch has one).
    const results = await answeredByScope(byScope(unique), async (scope, names) => {
      const { rows } = await this.run(() => this.db.query<ClaimRow>(this.statements.claim, [scope, names, owner, lease]));
      return claimResults(rows, names.length);
    });
    return at === undefined ? results : at.map((i) => results[i] as ClaimResult);
  }

  /**
   * One statement: the completes, the releases, then the claims (a round trip instead of three; the
   * gate keeps the lists apart). Without releases (the usual call) the statement has no release part,
   * without completes either it is the claim, and completes alone are the complete: an empty part
   * still costs its executor setup. Keys
   * of several scopes (never a gate's) go as the three calls, in that order.
   */
  async exchange(calls: StoreExchange): Promise<ClaimResult[]> {
    if (calls.complete.length === 0 && calls.release.length === 0) return this.claim(calls.claim, calls.owner, calls.leaseMs);
    if (calls.claim.length === 0 && calls.release.length === 0) {
      // Completes alone (a consumer in batch mode records a batch between its claims): the plain statement.
      await this.complete(calls.complete, calls.retentionMs);
      return [];
    }
    const scope = commonScope([calls.claim, calls.complete, calls.release]);
    if (scope === undefined) {
      await this.complete(calls.complete, calls.retentionMs);
      await this.release(calls.release, calls.owner);
      return this.claim(calls.claim, calls.owner, calls.leaseMs);
    }
    const { unique, at } = distinctKeys(calls.claim);
    const params: unknown[] = [
      scope,
      unique.map((k) => k.key),
      calls.owner,
      Math.max(1, Math.round(calls.leaseMs)),
      distinctKeys(calls.complete).unique.map((k) => k.key),
      Math.max(1, Math.round(calls.retentionMs)),
    ];
    let statement = this.statements.exchange;
    if (calls.release.length > 0) {
      // Each key once: an upsert may not touch a row twice.
      params.push(distinctKeys(calls.release).unique.map((k) => k.key));
      statement = this.statements.exchangeReleasing;
    }
    const result = await this.run(() => this.db.query<ClaimRow>(statement, params));
    const results = claimResults(result.rows, unique.length);
    return at === undefined ? results : at.map((i) => results[i] as ClaimResult);
  }

  async complete(keys: readonly DedupeKey[], retentionMs: number): Promise<void> {
    if (keys.length > 0) await this.run(() => this.completeWithin(this.db, keys, retentionMs));
  }

  /**
   * Records the keys as processed on `client`: inside a flow's own transaction (same database), the
   * record commits with the effect, and a crash before the ack cannot repeat the effect.
   */
  async completeWithin(client: Queryable, keys: readonly DedupeKey[], retentionMs: number): Promise<void> {
    // Each key once: an upsert may not touch a row twice.
    for (const { scope, names } of byScope(distinctKeys(keys).unique)) await client.query(this.statements.complete, [scope, names, Math.max(1, Math.round(retentionMs))]);
  }

  async release(keys: readonly DedupeKey[], owner: string): Promise<void> {
    for (const { scope, names } of byScope(distinctKeys(keys).unique)) await this.run(() => this.db.query(this.statements.release, [scope, names, owner]));
  }

  /** Deletes expired rows, range by range from where the last sweep stopped (see TableSweep); how many went. */
  sweep(options: SweepOptions = {}): Promise<number> {
    return this.sweeper.run(options);
  }

  close(): Promise<void> {
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    return Promise.resolve();
  }

  private async declareOrCheck(): Promise<void> {
    const { table, mode } = this.options;
    const problems = await this.run(() => declareOrCheckTable(this.db, table, mode, dedupeTableDdl(table), DEDUPE_COLUMNS, DEDUPE_INDEXES));
    if (problems.length > 0) {
      this.tableWrong = true;
      throw new DedupeStoreError(`${this.description}: ${problems.join('; ')}`, 'schema');
    }
    const sweepMs = this.options.sweepMs ?? 60_000;
    if (sweepMs > 0 && this.sweepTimer === undefined) {
      this.sweepTimer = setInterval(() => void this.sweep().catch(() => undefined), sweepMs);
      this.sweepTimer.unref?.();
    }
  }

  private async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof DedupeStoreError) throw err;
      const problem = postgresProblem(err);
      if (problem === 'schema') {
        // The table went away (or lost a column) under the store: checked again before it is used.
        this.tableWrong = true;
        this.prepared = undefined;
      }
      throw new DedupeStoreError(`deduplication table ${this.t}: ${postgresErrorText(err, this.db.description)}`, problem);
    }
  }
}

/** A key the claim did not take (1-based `ord` in the claim's list) and its row as it was. */
interface ClaimRow {
  ord: string;
  state: string | null;
  owner: string | null;
  until: string | null;
}

/** The answers for a claim of `count` keys (a key without a row in the answer was taken). */
function claimResults(rows: readonly ClaimRow[], count: number): ClaimResult[] {
  const results = new Array<ClaimResult>(count).fill(CLAIMED);
  for (const row of rows) {
    // Taken by another owner between our snapshot and our insert, or held: look again soon.
    results[Number(row.ord) - 1] =
      row.state === 'done' ? DONE : { state: 'held', owner: row.owner ?? 'another consumer', until: row.until === null ? Date.now() + 1000 : Number(row.until) };
  }
  return results;
}
