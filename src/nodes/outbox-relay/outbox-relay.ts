/**
 * `outbox relay`: publishes the outbox table's pending events to RabbitMQ through the broker's
 * confirm publisher (`mandatory`, messageId = the row's id), marks them sent in the claiming
 * transaction, retries failures with a capped backoff and gives up after N attempts (status
 * `failed`: shown on the status and in the metrics, listed and sent again by a msg). Wakes on the
 * write's NOTIFY, polls as well, deletes sent rows after the retention.
 */
import { OutboxRelay, outboxChannel, type RelayCounts } from '../../lib/outbox';
import { openTelemetryTracer } from '../../lib/trace';
import { readNumberFields } from '../../lib/rules';
import { findBroker } from '../shared/broker-node';
import { statusKey, translator } from '../shared/i18n';
import { metrics } from '../shared/metrics';
import type { Node, NodeAPI, NodeDef, NodeMessage, NodeStatus } from '../shared/node-red';
import { outboxTarget, type RelayLook, type RelayNode } from '../shared/outbox-node';
import { NUMBER_FIELDS } from '../shared/properties';
import { StatusUpdates } from '../shared/status';
import { TableWatch } from '../shared/table-watch';

const COUNTS_MS = 5000;
/** While its table is not usable the relay tries again every poll interval, at least 1 s and at most 10 s apart. */
const TABLE_RETRY_MIN_MS = 1000;
const TABLE_RETRY_MAX_MS = 10_000;

export = function register(RED: NodeAPI): void {
  function OutboxRelayNode(this: RelayNode, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const t = translator(RED);
    const target = outboxTarget(RED, def);
    const broker = findBroker(RED, def.broker);
    const numbers = readNumberFields(def, NUMBER_FIELDS['outbox-relay']);
    const problems = [...('problems' in target ? target.problems : []), ...numbers.problems];
    if (!broker) problems.push('select a RabbitMQ broker (a retry-broker configuration)');
    if (problems.length > 0 || !broker || 'problems' in target) {
      const problem = `not usable: ${problems.join('; ')}`;
      node.relayHealth = () => ({ table: 'problems' in target ? '' : target.table.display, problem, brokerConnected: broker?.connection.state.phase === 'connected' });
      node.error(`outbox relay ${problem}`);
      node.status({ fill: 'red', shape: 'ring', text: statusKey('outbox-relay.status.invalid') });
      return;
    }
    const n = numbers.values;
    const confirmed = broker.connection.publisher(node.id);
    const publisher = {
      publish: confirmed.publish.bind(confirmed),
      publishBatch: confirmed.publishBatch.bind(confirmed),
      exchangeExists: (exchange: string): Promise<boolean> =>
        broker.connection.withThrowawayChannel((ch) => ch.checkExchange(exchange)).then(
          () => true,
          (err: unknown) => {
            // 404: it does not exist; anything else (no connection) is not an answer: publish and see.
            if ((err as { code?: unknown }).code === 404) return false;
            return true;
          },
        ),
    };
    const relay = new OutboxRelay({
      db: target.database,
      table: target.table,
      publisher,
      batchSize: n.batchSize,
      pollMs: n.pollSeconds * 1000,
      maxAttempts: n.maxAttempts,
      backoff: { initialMs: n.backoffSeconds * 1000, maxMs: n.backoffMaxSeconds * 1000 },
      retentionMs: n.retentionDays * 86_400_000,
      ordered: def.ordered === true,
      deleteSent: def.deleteSent === true,
      tracer: openTelemetryTracer(),
    });
    let rows: RelayCounts | undefined;
    /** The last look at the table, for the health report. */
    let look: RelayLook | undefined;
    let brokerStatus: NodeStatus | undefined;
    let dbStatus: NodeStatus = target.pg.databaseStatus();
    const watch = new TableWatch(target, Math.min(TABLE_RETRY_MAX_MS, Math.max(TABLE_RETRY_MIN_MS, n.pollSeconds * 1000)), {
      error: (text) => node.error(text),
      log: (text) => node.log(text),
      usable: () => {
        relay.start();
        lookAtRows();
        status.now();
      },
      changed: () => status.now(),
    });
    const status = new StatusUpdates(
      () => {
        // The most urgent first: what stops relaying, then rows given up on, then the counts.
        // A database that cannot be reached or refuses the login is its own status, not the table's.
        if (watch.problem) return watch.problem.kind === 'table' ? { fill: 'red', shape: 'ring', text: statusKey('outbox-relay.status.table') } : dbStatus;
        if (dbStatus.fill === 'red') return dbStatus;
        if (broker.connection.state.phase !== 'connected') return brokerStatus ?? { fill: 'yellow', shape: 'ring', text: statusKey('outbox-relay.status.waiting') };
        const failed = rows?.failed ?? 0;
        const text = (failed > 0 ? t('outbox-relay.status.failed', { count: failed }) : '') + t('outbox-relay.status.counts', { sent: relay.stats.sent, pending: rows?.pending ?? 0 });
        return { fill: failed > 0 ? 'yellow' : 'green', shape: 'dot', text };
      },
      (shown) => node.status(shown),
      500,
    );
    const lookAtRows = (): void => {
      relay.counts().then(
        (c) => {
          rows = c;
          look = { at: Date.now(), ...c };
          status.soon();
        },
        (err: unknown) => {
          look = { at: Date.now(), error: err instanceof Error ? err.message : String(err) };
        },
      );
    };
    const countsTimer = setInterval(lookAtRows, COUNTS_MS);
    countsTimer.unref?.();

    const brokerUser = {
      id: node.id,
      status: (s: NodeStatus) => {
        brokerStatus = s;
        status.now();
      },
    };
    const dbUser = {
      id: `${node.id}/db`,
      status: (s: NodeStatus) => {
        dbStatus = s;
        // The database answers again: try the table now rather than at the next retry.
        if (s.fill === 'green' && watch.problem?.kind === 'database') watch.start();
        status.now();
      },
    };
    broker.register(brokerUser);
    target.pg.register(dbUser);
    // Relaying only while the broker is connected: a publish that cannot go is not a failed attempt.
    const followBroker = (): void => {
      if (broker.connection.state.phase === 'connected') relay.resume();
      else relay.pause();
      status.now();
    };
    broker.connection.on('state', followBroker);
    relay.pause();
    followBroker();

    relay.on('sent', () => {
      status.soon();
    });
    relay.on('failure', (f) => {
      if (f.final) {
        node.warn(`outbox event ${f.id} failed after ${f.attempts} attempts, not published: ${f.error} (send msg.topic "retry" to try again)`);
        lookAtRows();
      } else {
        node.warn(`outbox event ${f.id} not published (attempt ${f.attempts}): ${f.error}; trying again after the backoff`);
      }
      status.soon();
    });
    relay.on('error', (text) => {
      node.error(text);
      status.now();
    });
    relay.on('recovered', () => {
      node.log(`outbox relay on ${target.table.display} works again`);
      status.now();
    });
    const listener = target.database.listen(
      outboxChannel(target.table),
      () => relay.wake(),
      () => relay.wake(),
    );
    node.relayHealth = () => ({ table: target.table.display, problem: watch.problem?.text, brokerConnected: broker.connection.state.phase === 'connected', look });
    const removeGauges = metrics.addOutbox({ id: node.id, table: target.table.sql, stats: () => relay.stats, rows: () => rows });

    watch.start();

    // msg.topic "failed": the failed rows (msg.payload.limit, default 100); "retry": sends failed rows again (msg.payload: an id, ids, or nothing for all).
    node.on('input', (msg: NodeMessage, send, done) => {
      const topic = typeof msg.topic === 'string' ? msg.topic : '';
      const table = target.table.sql;
      if (topic === 'failed') {
        const limit = Number((msg.payload as { limit?: unknown } | undefined)?.limit ?? 100);
        target.database
          .query(
            `SELECT id, exchange, routing_key AS "routingKey", attempts, last_error AS "lastError", created_at AS "createdAt", order_key AS "orderKey"
               FROM ${table} WHERE status = 'failed' ORDER BY seq LIMIT $1`,
            [Number.isInteger(limit) && limit > 0 ? limit : 100],
          )
          .then(
            (result) => {
              msg.payload = result.rows;
              send(msg);
              done();
            },
            (err: unknown) => done(err as Error),
          );
        return;
      }
      if (topic === 'retry') {
        const given: unknown = msg.payload;
        const ids = given === undefined || given === null || given === '' ? null : (Array.isArray(given) ? given : [given]).map((id) => (typeof id === 'string' ? id : JSON.stringify(id)));
        target.database
          .query(`UPDATE ${table} SET status = 'pending', attempts = 0, next_attempt_at = now() WHERE status = 'failed' AND ($1::text[] IS NULL OR id = ANY($1::text[]))`, [ids])
          .then(
            (result) => {
              msg.payload = { retried: result.rowCount ?? 0 };
              relay.wake();
              lookAtRows();
              send(msg);
              done();
            },
            (err: unknown) => done(err as Error),
          );
        return;
      }
      done(new Error(t('outbox-relay.errors.topic', { topic: JSON.stringify(msg.topic ?? null) })));
    });

    node.on('close', (_removed, done) => {
      clearInterval(countsTimer);
      watch.stop();
      status.stop();
      removeGauges();
      broker.connection.off('state', followBroker);
      relay
        .stop()
        .then(() => listener.close())
        .then(() => broker.connection.closePublisher(node.id))
        .then(() => {
          target.pg.deregister(dbUser);
          return broker.deregister(brokerUser);
        })
        .then(done, done);
    });
  }
  RED.nodes.registerType('outbox-relay', OutboxRelayNode as (this: Node, def: NodeDef) => void);
};
