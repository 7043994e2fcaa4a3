/**
 * The flow the fault suite deploys, as a user would build it: retry consumer → process → the effect
 * (one row per processing in a PostgreSQL table without a unique constraint, so a repeated effect
 * shows) → record the processed id with a confirmed publish (retry-publish) → ack; poison → retry
 * (parked after 3 attempts); a failed effect or record → retry. With deduplication, the consumer
 * deduplicates by messageId in a PostgreSQL store of the same database, and the effect's transaction
 * records the key as processed.
 */
import { uniqueName } from '../helpers/broker';
import { statusKey } from '../../src/nodes/shared/i18n';

export interface FaultNames {
  exchange: string;
  mainQueue: string;
  retryQueue: string;
  parkingQueue: string;
  /** Where the flow records each processed id. */
  processedQueue: string;
  /** The PostgreSQL table of effects (one row per processing). */
  effectsTable: string;
  /** The deduplication table, when the run deduplicates. */
  dedupeTable: string;
  /** The outbox table, when the events come through the outbox. */
  outboxTable: string;
  routingKey: string;
}

export function faultNames(fault: string): FaultNames {
  const base = uniqueName(`faults-${fault}`);
  return {
    exchange: `${base}.exchange`,
    mainQueue: `${base}.main`,
    retryQueue: `${base}.retry`,
    parkingQueue: `${base}.parking`,
    processedQueue: `${base}.processed`,
    effectsTable: `${base.replace(/[^A-Za-z0-9_]/g, '_')}_effects`,
    dedupeTable: `${base.replace(/[^A-Za-z0-9_]/g, '_')}_dedupe`,
    outboxTable: `${base.replace(/[^A-Za-z0-9_]/g, '_')}_events`,
    routingKey: 'work',
  };
}

/** The flow's processing: poison fails; anything else is recorded with the time and the consumer tag that delivered it. */
const PROCESS = `if (msg.payload.poison) {
    msg.error = { message: 'poison message ' + msg.payload.n };
    return [null, msg];
}
msg.payload = { id: msg.amqp.properties.messageId, at: Date.now(), tag: msg.amqp.consumerTag };
msg.statements = [{ sql: 'INSERT INTO ' + env.get('EFFECTS_TABLE') + ' (message_id) VALUES ($1)', params: [msg.payload.id] }];
return [msg, null];`;

const QUORUM = '{"x-queue-type":"quorum"}';

/** `quorum`: every queue of the topology is a quorum queue (the cluster row). */
export function faultFlow(names: FaultNames, options: { quorum?: boolean; dedupe?: boolean; redis?: string; outbox?: boolean } = {}): Record<string, unknown>[] {
  const z = 'faults-tab';
  const dedupe = options.dedupe === true;
  const store = options.redis
    ? { id: 'faults-dedupe', type: 'retry-dedupe', name: 'processed', kind: 'redis', url: options.redis, prefix: `${names.dedupeTable}:`, retentionHours: '24', leaseSeconds: '5' }
    : { id: 'faults-dedupe', type: 'retry-dedupe', name: 'processed', kind: 'postgres', postgres: 'faults-db', table: names.dedupeTable, mode: 'declare', retentionHours: '24', leaseSeconds: '5' };
  return [
    { id: z, type: 'tab', label: 'fault suite', env: [{ name: 'EFFECTS_TABLE', value: names.effectsTable, type: 'str' }] },
    { id: 'faults-db', type: 'retry-postgres', name: 'fault database', url: '${DATABASE_URL}', host: '127.0.0.1', port: '5432', database: 'test', poolSize: '10' },
    ...(dedupe ? [store] : []),
    // The outbox rows: the events come from the outbox table, published by a relay of this flow.
    ...(options.outbox
      ? [{ id: 'faults-relay', type: 'outbox-relay', z, name: 'relay', broker: 'faults-broker', postgres: 'faults-db', table: names.outboxTable, mode: 'declare', pollSeconds: '1', backoffSeconds: '0.5', backoffMaxSeconds: '2', maxAttempts: '100', x: 120, y: 300, wires: [[]] }]
      : []),
    {
      id: 'faults-broker',
      type: 'retry-broker',
      name: 'fault broker',
      url: '${AMQP_URL}',
      host: '127.0.0.1',
      port: '5672',
      vhost: '/',
      tls: false,
      heartbeat: '30',
      reconnectMax: '5',
      managementUrl: '',
    },
    {
      id: 'faults-config',
      type: 'retry-config',
      name: 'work',
      broker: 'faults-broker',
      mode: 'declare',
      mainExchange: names.exchange,
      mainExchangeType: 'direct',
      mainQueue: names.mainQueue,
      routingKeys: names.routingKey,
      retryExchange: '',
      retryExchangeType: 'fanout',
      retryQueue: names.retryQueue,
      retryDelay: '500',
      parkingQueue: names.parkingQueue,
      maxAttempts: '3',
      mainQueueArgs: options.quorum ? QUORUM : '{}',
      retryQueueArgs: options.quorum ? QUORUM : '{}',
      parkingQueueArgs: options.quorum ? QUORUM : '{}',
      maxAge: '0',
    },
    {
      id: 'faults-consumer',
      type: 'retry-consumer',
      z,
      name: 'consume work',
      config: 'faults-config',
      mode: 'retry',
      prefetch: '20',
      settleTimeout: dedupe ? '10' : '60',
      parkingWatch: '30',
      decode: 'auto',
      invalidBody: 'park',
      ...(dedupe ? { dedupe: 'faults-dedupe', dedupeKeyType: 'messageId', dedupeNoKey: 'process', dedupeStoreDown: 'pause' } : {}),
      x: 120,
      y: 80,
      wires: [['faults-process']],
    },
    { id: 'faults-process', type: 'function', z, name: 'process', func: PROCESS, outputs: 2, noerr: 0, initialize: '', finalize: '', libs: [], x: 300, y: 80, wires: [['faults-effect'], ['faults-retry']] },
    {
      id: 'faults-effect',
      type: 'outbox-write',
      z,
      name: 'the effect',
      postgres: 'faults-db',
      table: `${names.effectsTable}_outbox`,
      mode: 'declare',
      event: false,
      // The key recorded in the effect's transaction: only with a PostgreSQL store in the same database.
      ...(dedupe && !options.redis ? { dedupe: 'faults-dedupe' } : {}),
      x: 400,
      y: 40,
      wires: [['faults-record']],
    },
    { id: 'faults-effect-catch', type: 'catch', z, name: 'effect failed', scope: ['faults-effect'], uncaught: false, x: 500, y: 200, wires: [['faults-retry']] },
    {
      id: 'faults-record',
      type: 'retry-publish',
      z,
      name: 'record processed id',
      broker: 'faults-broker',
      mode: 'publish',
      exchange: '',
      routingKey: names.processedQueue,
      persistent: true,
      contentType: '',
      declareQueue: '',
      x: 500,
      y: 60,
      wires: [['faults-ack']],
    },
    { id: 'faults-ack', type: 'retry-settle', z, name: 'ack', action: 'ack', reason: '', x: 700, y: 60, wires: [] },
    { id: 'faults-retry', type: 'retry-settle', z, name: 'retry', action: 'retry', reason: '', x: 700, y: 120, wires: [] },
    { id: 'faults-catch', type: 'catch', z, name: 'record failed', scope: ['faults-record'], uncaught: false, x: 500, y: 160, wires: [['faults-retry']] },
    // Every status of the consumer and of the publishing node, as one parsable line in Node-RED's log.
    { id: 'faults-status', type: 'status', z, name: '', scope: ['faults-consumer', 'faults-record'], x: 120, y: 220, wires: [['faults-status-log']] },
    {
      id: 'faults-status-log',
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

export const STATUS_MARK = 'fault-status ';

export interface NodeStatusLine {
  id: string;
  fill?: string;
  shape?: string;
  text?: string;
}

/** The latest status of each node, from Node-RED's log lines. */
export function latestStatuses(lines: string[]): Map<string, NodeStatusLine> {
  const latest = new Map<string, NodeStatusLine>();
  for (const line of lines) {
    const at = line.indexOf(STATUS_MARK);
    if (at < 0) continue;
    const status = JSON.parse(line.slice(at + STATUS_MARK.length)) as NodeStatusLine;
    latest.set(status.id, status);
  }
  return latest;
}

/** Consuming (green, or yellow while the parking queue holds messages) and connected: nothing stuck. */
export function healthy(latest: Map<string, NodeStatusLine>): boolean {
  const consumer = latest.get('faults-consumer');
  const record = latest.get('faults-record');
  return consumer?.shape === 'dot' && /in flight/.test(consumer.text ?? '') && record?.fill === 'green' && record.text === statusKey('retry-broker.status.connected');
}
