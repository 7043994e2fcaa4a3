/**
 * `outbox write`: runs the msg's SQL statements and inserts the event row in ONE PostgreSQL
 * transaction, so the business row and its event are written together or not at all. The relay
 * publishes the event afterwards. A failing statement rolls everything back and is a Catch-able
 * error naming it. With the event off it is a plain transactional SQL node.
 */
import { randomUUID } from 'node:crypto';
import { publishOptionsProblem } from '../../lib/amqp';
import { encodePayload } from '../../lib/message';
import { PostgresDedupeStore } from '../../lib/dedupe';
import { statementsProblem, writeOutbox, type OutboxEvent, type OutboxStatement } from '../../lib/outbox';
import type { Queryable } from '../../lib/postgres';
import { findDedupeStore } from '../shared/dedupe-node';
import { statusKey, translator } from '../shared/i18n';
import { stringProp, type Node, type NodeAPI, type NodeDef, type NodeMessage, type NodeStatus } from '../shared/node-red';
import { outboxTarget } from '../shared/outbox-node';
import { publishOptions } from '../shared/publish-options';
import { StatusUpdates } from '../shared/status';
import { TableWatch } from '../shared/table-watch';

/** While its table is not usable the write tries again every 10 s (and at each msg). */
const TABLE_RETRY_MS = 10_000;

export = function register(RED: NodeAPI): void {
  function OutboxWrite(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const t = translator(RED);
    const target = outboxTarget(RED, def);
    const withEvent = def.event !== false;
    const exchange = stringProp(def.exchange);
    const routingKey = stringProp(def.routingKey);
    const persistent = def.persistent !== false;
    const problems = 'problems' in target ? [...target.problems] : [];
    // Optionally, the consumed message's deduplication key is recorded as processed in the same
    // transaction as the effect: a crash before the ack then cannot repeat the effect.
    const dedupeNode = stringProp(def.dedupe) === '' ? undefined : findDedupeStore(RED, def.dedupe);
    if (stringProp(def.dedupe) !== '') {
      if (!dedupeNode?.store) problems.push('the selected deduplication store does not exist or is not usable');
      else if (!(dedupeNode.store instanceof PostgresDedupeStore) || ('problems' in target ? true : !dedupeNode.store.isIn(target.database))) {
        problems.push('the deduplication store must be a PostgreSQL store on the same database configuration to share the transaction');
      }
    }
    if (problems.length > 0) {
      node.error(`outbox write not usable: ${problems.join('; ')}`);
      node.status({ fill: 'red', shape: 'ring', text: statusKey('outbox-write.status.invalid') });
      node.on('input', (_msg, _send, done) => done(new Error(`outbox write not usable: ${problems.join('; ')}`)));
      return;
    }
    if ('problems' in target) return;
    let written = 0;
    let lastError: string | undefined;
    let dbStatus: NodeStatus = target.pg.databaseStatus();
    const status = new StatusUpdates(
      () => {
        // A database that cannot be reached or refuses the login is its own status, not the table's.
        if (watch.problem?.kind === 'table') return { fill: 'red', shape: 'ring', text: statusKey('outbox-write.status.table') };
        if (watch.problem || dbStatus.fill === 'red') return dbStatus;
        if (lastError) return { fill: 'red', shape: 'dot', text: t('outbox-write.status.failed', { count: written }) };
        return { fill: 'green', shape: 'dot', text: t('outbox-write.status.written', { count: written }) };
      },
      (shown) => node.status(shown),
      500,
    );
    const watch = new TableWatch(target, TABLE_RETRY_MS, {
      error: (text) => node.error(text),
      log: (text) => node.log(text),
      usable: () => status.now(),
      changed: () => status.now(),
    });
    const user = {
      id: node.id,
      status: (s: NodeStatus) => {
        dbStatus = s;
        // The database answers again: try the table now rather than at the next retry.
        if (s.fill === 'green' && watch.problem?.kind === 'database') watch.start();
        status.now();
      },
    };
    target.pg.register(user);
    watch.start();

    node.on('input', (msg: NodeMessage, send, done) => {
      let statements: OutboxStatement[];
      let event: OutboxEvent | undefined;
      try {
        const given = msg.statements === undefined ? [] : Array.isArray(msg.statements) ? msg.statements : [msg.statements];
        const problem = statementsProblem(given);
        if (problem) throw new Error(problem);
        statements = given as OutboxStatement[];
        event = withEvent ? eventOf(msg) : undefined;
        if (!event && statements.length === 0) throw new Error('nothing to write: msg.statements is empty and the event is off');
      } catch (err) {
        done(err as Error);
        return;
      }
      const claimed = (msg.amqp as { dedupe?: { scope?: unknown; key?: unknown } } | undefined)?.dedupe;
      const store = dedupeNode?.store;
      const retentionMs = dedupeNode?.retentionMs ?? 0;
      const also =
        store instanceof PostgresDedupeStore && claimed && typeof claimed.scope === 'string' && typeof claimed.key === 'string'
          ? (client: Queryable) => store.completeWithin(client, [{ scope: claimed.scope as string, key: claimed.key as string }], retentionMs)
          : undefined;
      watch
        .check()
        .then(() => writeOutbox(target.database, target.table, statements, event, also))
        .then(
          (results) => {
            written += 1;
            lastError = undefined;
            status.soon();
            msg.outbox = { id: event?.id ?? null, table: target.table.sql, results };
            send(msg);
            done();
          },
          (err: unknown) => {
            lastError = (err as Error).message;
            status.now();
            done(err instanceof Error ? err : new Error(String(err)));
          },
        );
    });

    function eventOf(msg: NodeMessage): OutboxEvent {
      const id = typeof msg.eventId === 'string' && msg.eventId !== '' ? msg.eventId : randomUUID();
      const eventExchange = exchange !== '' ? exchange : stringProp(msg.exchange);
      if (eventExchange === '') throw new Error('msg.exchange is empty: name the exchange the event is published to');
      const key = routingKey !== '' ? routingKey : stringProp(msg.topic);
      const encoded = encodePayload(msg.payload);
      const options = publishOptions({ mode: 'publish', exchange: eventExchange, routingKey: key, persistent, contentType: '' }, msg, encoded.contentType, () => id) as Record<string, unknown>;
      const problem = publishOptionsProblem(options);
      if (problem !== undefined) throw new Error(`msg.properties: ${problem}`);
      // The relay sets mandatory and the messageId (the row's id) when it publishes.
      const { headers, ...properties } = options;
      delete properties.mandatory;
      delete properties.messageId;
      const orderKey = typeof msg.orderKey === 'string' && msg.orderKey !== '' ? msg.orderKey : undefined;
      return { id, exchange: eventExchange, routingKey: key, content: encoded.content, headers: (headers as Record<string, unknown> | undefined) ?? {}, properties, orderKey };
    }

    node.on('close', (_removed, done) => {
      watch.stop();
      status.stop();
      target.pg.deregister(user);
      done();
    });
  }
  RED.nodes.registerType('outbox-write', OutboxWrite);
};
