/**
 * The flow of the fault suite's partitioned row (issue 42), as a user would build it: a retry
 * consumer of a partitioned configuration (8 partitions, computed routing) → a downstream that takes
 * 5 ms a call → the effect (a row per processing in PostgreSQL, with the key recorded as processed in
 * the same transaction: deduplication by messageId in a PostgreSQL store) → ack; a failed effect →
 * retry (ordered mode holds it). Every status of the consumer as one parsable log line.
 */
import { uniqueName } from '../helpers/broker';
import { STATUS_MARK } from './fault-flow';

export interface PartitionNames {
  mainQueue: string;
  retryQueue: string;
  parkingQueue: string;
  /** One row per processing: the id, the key, the message's number within its key, in the order the effects happened (`seq`). */
  effectsTable: string;
  dedupeTable: string;
}

export function partitionNames(row: string): PartitionNames {
  const base = uniqueName(`faults-${row}`);
  const table = base.replace(/[^A-Za-z0-9_]/g, '_');
  return { mainQueue: `${base}.main`, retryQueue: `${base}.retry`, parkingQueue: `${base}.parking`, effectsTable: `${table}_effects`, dedupeTable: `${table}_dedupe` };
}

/** The effects table: no unique constraint, so a repeated effect shows; `seq` orders the effects as they committed. */
export const effectsDdl = (names: PartitionNames): string => `CREATE TABLE ${names.effectsTable} (seq bigserial PRIMARY KEY, message_id text NOT NULL, key text NOT NULL, n int NOT NULL)`;

const DOWNSTREAM = `setTimeout(() => {
    msg.statements = [{ sql: 'INSERT INTO ' + env.get('EFFECTS_TABLE') + ' (message_id, key, n) VALUES ($1, $2, $3)', params: [msg.amqp.properties.messageId, msg.payload.key, msg.payload.n] }];
    node.send(msg);
}, Number(env.get('DOWNSTREAM_MS')));
return null;`;

export function partitionFlow(names: PartitionNames, options: { partitions: number; downstreamMs: number; leaseSeconds: number }): Record<string, unknown>[] {
  const z = 'partitions-tab';
  return [
    {
      id: z,
      type: 'tab',
      label: 'partitioned',
      env: [
        { name: 'EFFECTS_TABLE', value: names.effectsTable, type: 'str' },
        { name: 'DOWNSTREAM_MS', value: String(options.downstreamMs), type: 'str' },
      ],
    },
    { id: 'p-db', type: 'retry-postgres', name: 'effects', url: '${DATABASE_URL}', host: '127.0.0.1', port: '5432', database: 'test', poolSize: '10' },
    { id: 'p-dedupe', type: 'retry-dedupe', name: 'processed', kind: 'postgres', postgres: 'p-db', table: names.dedupeTable, mode: 'declare', retentionHours: '24', leaseSeconds: String(options.leaseSeconds) },
    { id: 'p-broker', type: 'retry-broker', name: 'fault broker', url: '${AMQP_URL}', host: '127.0.0.1', port: '5672', vhost: '/', tls: false, heartbeat: '30', reconnectMax: '5', managementUrl: '' },
    {
      id: 'p-config',
      type: 'retry-config',
      name: 'accounts',
      broker: 'p-broker',
      mode: 'declare',
      mainExchange: '',
      mainExchangeType: 'direct',
      mainQueue: names.mainQueue,
      routingKeys: '',
      retryExchange: '',
      retryExchangeType: 'fanout',
      retryQueue: names.retryQueue,
      retryDelay: '500',
      parkingQueue: names.parkingQueue,
      maxAttempts: '3',
      maxAge: '0',
      mainQueueArgs: '{}',
      retryQueueArgs: '{}',
      parkingQueueArgs: '{}',
      partitions: String(options.partitions),
      partitionRouting: 'computed',
    },
    {
      id: 'p-consumer',
      type: 'retry-consumer',
      z,
      name: 'consume accounts',
      config: 'p-config',
      mode: 'ordered',
      orderedPause: '1',
      settleTimeout: '60',
      parkingWatch: '0',
      decode: 'auto',
      invalidBody: 'park',
      dedupe: 'p-dedupe',
      dedupeKeyType: 'messageId',
      dedupeNoKey: 'process',
      dedupeStoreDown: 'pause',
      x: 120,
      y: 80,
      wires: [['p-downstream']],
    },
    { id: 'p-downstream', type: 'function', z, name: 'downstream (5 ms)', func: DOWNSTREAM, outputs: 1, noerr: 0, initialize: '', finalize: '', libs: [], x: 300, y: 80, wires: [['p-effect']] },
    // The key recorded as processed in the effect's transaction: a redelivered message is never applied twice.
    { id: 'p-effect', type: 'outbox-write', z, name: 'the effect', postgres: 'p-db', table: `${names.effectsTable}_outbox`, mode: 'declare', event: false, dedupe: 'p-dedupe', x: 480, y: 80, wires: [['p-ack']] },
    { id: 'p-effect-catch', type: 'catch', z, name: 'effect failed', scope: ['p-effect'], uncaught: false, x: 480, y: 160, wires: [['p-retry']] },
    { id: 'p-ack', type: 'retry-settle', z, name: 'ack', action: 'ack', reason: '', x: 660, y: 80, wires: [] },
    { id: 'p-retry', type: 'retry-settle', z, name: 'retry', action: 'retry', reason: '', x: 660, y: 160, wires: [] },
    { id: 'p-status', type: 'status', z, name: '', scope: ['p-consumer'], x: 120, y: 220, wires: [['p-status-log']] },
    {
      id: 'p-status-log',
      type: 'debug',
      z,
      name: 'status',
      active: true,
      tosidebar: false,
      console: true,
      tostatus: false,
      complete: `"${STATUS_MARK}" & $string({"id": status.source.id, "fill": status.fill, "shape": status.shape, "text": status.text})`,
      targetType: 'jsonata',
      x: 300,
      y: 220,
      wires: [],
    },
  ];
}
