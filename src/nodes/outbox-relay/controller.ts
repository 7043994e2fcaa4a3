/**
 * A running outbox relay node: owns its `OutboxRelay`, its table watch, its status, the look at the
 * table's rows every few seconds, its NOTIFY listener and its registrations with the broker and the
 * database; the relay runs only while the broker is connected. `close()` removes every listener and
 * timer it added and releases what it holds, in order.
 */
import { outboxChannel, type OutboxRelay, type RelayCounts } from '../../lib/outbox';
import type { RetryBrokerNode } from '../shared/broker-node';
import type { Translate } from '../shared/i18n';
import { metrics } from '../shared/metrics';
import type { NodeStatus } from '../shared/node-red';
import type { OutboxTarget, RelayLook, RelayNode } from '../shared/outbox-node';
import { StatusUpdates } from '../shared/status';
import { TableWatch } from '../shared/table-watch';
import { relayCommand } from './commands';
import { followRelay } from './relay-events';
import { relayStatus } from './relay-status';

const COUNTS_MS = 5000;
/** While its table is not usable the relay tries again every poll interval, at least 1 s and at most 10 s apart. */
const TABLE_RETRY_MIN_MS = 1000;
const TABLE_RETRY_MAX_MS = 10_000;

export interface RelayParts {
  node: RelayNode;
  t: Translate;
  target: OutboxTarget;
  broker: RetryBrokerNode;
  relay: OutboxRelay;
  pollMs: number;
}

/** How the broker and the database push their status to the node. */
interface StatusUser {
  id: string;
  status(status: NodeStatus): void;
}

export class RelayController {
  private rows: RelayCounts | undefined;
  /** The last look at the table, for the health report. */
  private look: RelayLook | undefined;
  private brokerStatus: NodeStatus | undefined;
  private dbStatus: NodeStatus;
  private readonly watch: TableWatch;
  private readonly status: StatusUpdates;
  private readonly countsTimer: NodeJS.Timeout;
  private readonly listener: { close(): Promise<void> };
  private readonly removeGauges: () => void;
  private readonly brokerUser: StatusUser;
  private readonly dbUser: StatusUser;
  /** Relaying only while the broker is connected: a publish that cannot go is not a failed attempt. */
  private readonly followBroker = (): void => {
    if (this.parts.broker.connection.state.phase === 'connected') this.parts.relay.resume();
    else this.parts.relay.pause();
    this.status.now();
  };

  constructor(private readonly parts: RelayParts) {
    const { node, target, broker, relay } = parts;
    this.dbStatus = target.pg.databaseStatus();
    this.watch = new TableWatch(target, Math.min(TABLE_RETRY_MAX_MS, Math.max(TABLE_RETRY_MIN_MS, parts.pollMs)), {
      error: (text) => node.error(text),
      log: (text) => node.log(text),
      usable: () => {
        relay.start();
        this.lookAtRows();
        this.status.now();
      },
      changed: () => this.status.now(),
    });
    this.status = new StatusUpdates(() => this.shown(), (shown) => node.status(shown), 500);
    this.countsTimer = setInterval(() => this.lookAtRows(), COUNTS_MS);
    this.countsTimer.unref?.();
    this.brokerUser = { id: node.id, status: (s) => this.brokerChanged(s) };
    this.dbUser = { id: `${node.id}/db`, status: (s) => this.databaseChanged(s) };
    broker.register(this.brokerUser);
    target.pg.register(this.dbUser);
    broker.connection.on('state', this.followBroker);
    relay.pause();
    this.followBroker();
    followRelay(relay, node, target.table.display, { rowsChanged: () => this.lookAtRows(), status: this.status });
    this.listener = target.database.listen(
      outboxChannel(target.table),
      () => relay.wake(),
      () => relay.wake(),
    );
    node.relayHealth = () => ({ table: target.table.display, problem: this.watch.problem?.text, brokerConnected: broker.connection.state.phase === 'connected', look: this.look });
    this.removeGauges = metrics.addOutbox({ id: node.id, table: target.table.sql, stats: () => relay.stats, rows: () => this.rows });
    this.watch.start();
    node.on('input', (msg, send, done) => {
      relayCommand(msg, { database: target.database, table: target.table.sql, t: parts.t, retried: () => this.retried() }).then(
        (answer) => {
          send(answer);
          done();
        },
        (err: unknown) => done(err as Error),
      );
    });
    node.on('close', (_removed, done) => {
      this.close().then(done, done);
    });
  }

  private shown(): NodeStatus {
    const { broker, relay, t } = this.parts;
    const brokerConnected = broker.connection.state.phase === 'connected';
    return relayStatus({ tableProblem: this.watch.problem, dbStatus: this.dbStatus, brokerConnected, brokerStatus: this.brokerStatus, sent: relay.stats.sent, rows: this.rows }, t);
  }

  private lookAtRows(): void {
    this.parts.relay.counts().then(
      (c) => {
        this.rows = c;
        this.look = { at: Date.now(), ...c };
        this.status.soon();
      },
      (err: unknown) => {
        this.look = { at: Date.now(), error: err instanceof Error ? err.message : String(err) };
      },
    );
  }

  /** Failed rows were sent again by a msg: relay them now. */
  private retried(): void {
    this.parts.relay.wake();
    this.lookAtRows();
  }

  private brokerChanged(s: NodeStatus): void {
    this.brokerStatus = s;
    this.status.now();
  }

  private databaseChanged(s: NodeStatus): void {
    this.dbStatus = s;
    // The database answers again: try the table now rather than at the next retry.
    if (s.fill === 'green' && this.watch.problem?.kind === 'database') this.watch.start();
    this.status.now();
  }

  private async close(): Promise<void> {
    const { node, broker, relay, target } = this.parts;
    clearInterval(this.countsTimer);
    this.watch.stop();
    this.status.stop();
    this.removeGauges();
    broker.connection.off('state', this.followBroker);
    await relay.stop();
    relay.removeAllListeners();
    await this.listener.close();
    await broker.connection.closePublisher(node.id);
    target.pg.deregister(this.dbUser);
    await broker.deregister(this.brokerUser);
  }
}
