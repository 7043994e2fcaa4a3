/**
 * The package's RabbitMQ and database logic, usable without Node-RED, in folders by concern. Each
 * folder's index names what it offers; a folder imports only from the folders below it (this list is
 * top to bottom), never up and never in a circle — test/unit/architecture.test.ts keeps it so.
 *
 * - health     the health report: whether every broker, consumer, store, database and relay works
 * - consume    consuming a retry topology's main queue: session lifecycle, deliveries, retry mover
 * - degrade    protecting what a flow calls: the kill switch and the rate limit
 * - dedupe     the idempotent consumer's store of processed keys
 * - outbox     the transactional outbox: statements and event in one transaction, the relay
 * - settle     what a settle becomes (decide) and carrying it out (acks, dead-letters, confirmed copies)
 * - classify   error kinds: a configuration's error rules and the classifier (transient, permanent, done)
 * - parking    the parking queue: peek, purge, replay, watch
 * - topology   the retry topology as data, declared or checked on a broker
 * - connection one AMQP connection per broker configuration, reconnecting
 * - postgres   one PostgreSQL database: pool, health, transactions, LISTEN, table checks
 * - publish    confirmed, mandatory publishing under bounded back-pressure
 * - message    what a message carries and becomes: attempts, payload, msg.amqp, copies
 * - observe    metrics and log limiting
 * - trace      W3C trace context on headers, OpenTelemetry spans when a process records them
 * - rules      property rules shared with the editor
 * - amqp       AMQP values and closing channels
 * - backoff    capped exponential delays (reconnect, kill switch restart, outbox retries, re-checks)
 * - collections keyed sets for what changes per message, without Map and Set (V8 links their old tables)
 */
export * as health from './health';
export * as consume from './consume';
export * as degrade from './degrade';
export * as dedupe from './dedupe';
export * as outbox from './outbox';
export * as settle from './settle';
export * as classify from './classify';
export * as parking from './parking';
export * as topology from './topology';
export * as connection from './connection';
export * as publish from './publish';
export * as postgres from './postgres';
export * as message from './message';
export * as observe from './observe';
export * as trace from './trace';
export * as rules from './rules';
export * as amqp from './amqp';
export * as backoff from './backoff';
export * as collections from './collections';
