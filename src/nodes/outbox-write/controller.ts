/**
 * A running outbox write node: owns its table watch, its status and its registration with the
 * database; writes each msg's statements and event in one transaction (with the consumed message's
 * deduplication key, when a store is selected; a batch msg's keys of the items it leaves to be acked).
 * `close()` stops its timers and deregisters.
 */
import { PostgresDedupeStore } from '../../lib/dedupe';
import { writeOutbox, type OutboxEvent, type OutboxStatement } from '../../lib/outbox';
import type { Queryable } from '../../lib/postgres';
import type { DedupeStoreNode } from '../shared/dedupe-node';
import { statusKey, type Translate } from '../shared/i18n';
import type { DoneFunction, Node, NodeMessage, NodeStatus, SendFunction } from '../shared/node-red';
import type { OutboxTarget } from '../shared/outbox-node';
import { StatusUpdates } from '../shared/status';
import { TableWatch } from '../shared/table-watch';
import { writeOf, type EventSettings } from './event';
import { processedKeys } from './processed-keys';

/** While its table is not usable the write tries again every 10 s (and at each msg). */
const TABLE_RETRY_MS = 10_000;

export interface WriteParts {
  node: Node;
  t: Translate;
  target: OutboxTarget;
  event: EventSettings;
  dedupe: DedupeStoreNode | undefined;
}

export class WriteController {
  private written = 0;
  private lastError: string | undefined;
  private dbStatus: NodeStatus;
  private readonly status: StatusUpdates;
  private readonly watch: TableWatch;
  /** How the database pushes its status to the node. */
  private readonly user: { id: string; status(status: NodeStatus): void };

  constructor(private readonly parts: WriteParts) {
    const { node, target } = parts;
    this.dbStatus = target.pg.databaseStatus();
    this.status = new StatusUpdates(() => this.shown(), (shown) => node.status(shown), 500);
    this.watch = new TableWatch(target, TABLE_RETRY_MS, {
      error: (text) => node.error(text),
      log: (text) => node.log(text),
      usable: () => this.status.now(),
      changed: () => this.status.now(),
    });
    this.user = { id: node.id, status: (s) => this.databaseChanged(s) };
    target.pg.register(this.user);
    this.watch.start();
    node.on('input', (msg, send, done) => this.input(msg, send, done));
    node.on('close', (_removed, done) => {
      this.close();
      done();
    });
  }

  private shown(): NodeStatus {
    const { t } = this.parts;
    // A database that cannot be reached or refuses the login is its own status, not the table's.
    if (this.watch.problem?.kind === 'table') return { fill: 'red', shape: 'ring', text: statusKey('outbox-write.status.table') };
    if (this.watch.problem || this.dbStatus.fill === 'red') return this.dbStatus;
    if (this.lastError) return { fill: 'red', shape: 'dot', text: t('outbox-write.status.failed', { count: this.written }) };
    return { fill: 'green', shape: 'dot', text: t('outbox-write.status.written', { count: this.written }) };
  }

  private databaseChanged(s: NodeStatus): void {
    this.dbStatus = s;
    // The database answers again: try the table now rather than at the next retry.
    if (s.fill === 'green' && this.watch.problem?.kind === 'database') this.watch.start();
    this.status.now();
  }

  private input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const { target } = this.parts;
    let statements: OutboxStatement[];
    let event: OutboxEvent | undefined;
    try {
      ({ statements, event } = writeOf(msg, this.parts.event));
    } catch (err) {
      done(err as Error);
      return;
    }
    const also = this.dedupeCompletion(msg);
    if (also instanceof Error) {
      done(also);
      return;
    }
    this.watch
      .check()
      .then(() => writeOutbox(target.database, target.table, statements, event, also))
      .then(
        (results) => {
          this.written += 1;
          this.lastError = undefined;
          this.status.soon();
          msg.outbox = { id: event?.id ?? null, table: target.table.sql, results };
          send(msg);
          done();
        },
        (err: unknown) => {
          this.lastError = (err as Error).message;
          this.status.now();
          done(err instanceof Error ? err : new Error(String(err)));
        },
      );
  }

  /**
   * Records the consumed message's deduplication key as processed, in the write's transaction: a batch
   * msg's keys of the items the flow leaves to be acked (`processed-keys.ts`); an Error when the batch's
   * `msg.outcomes` / `msg.errors` cannot be read (nothing is written).
   */
  private dedupeCompletion(msg: NodeMessage): ((client: Queryable) => Promise<void>) | Error | undefined {
    const store = this.parts.dedupe?.store;
    const retentionMs = this.parts.dedupe?.retentionMs ?? 0;
    if (!(store instanceof PostgresDedupeStore)) return undefined;
    const processed = processedKeys(msg);
    if (processed instanceof Error) return new Error(`outbox write: ${processed.message}; nothing written`);
    if (processed.length === 0) return undefined;
    return (client: Queryable) => store.completeWithin(client, processed, retentionMs);
  }

  private close(): void {
    this.watch.stop();
    this.status.stop();
    this.parts.target.pg.deregister(this.user);
  }
}
