/**
 * The flow each of the soak's two Node-RED processes runs, as a user would build it:
 *
 * - **work** (retry mode): retry consumer (deduplicated by messageId in the soak's private Redis, kill
 *   switch on) → POST the id to the soak's downstream (http request) → 200: ack; another answer: retry
 *   with the answer's status (`4xx` is permanent: parked at once; 503 waits in backoff tiers 1 s, 5 s,
 *   15 s, 30 s, 8 attempts); the call failing (refused): retry. The Redis is a master + replica behind
 *   Sentinel (test/soak/sentinel.ts).
 * - **events**: an outbox relay publishes the outbox table's events (the soak's private PostgreSQL) to
 *   a 3-node cluster (every queue quorum); a second retry consumer there, deduplicated in PostgreSQL,
 *   kill switch on, feeds the same downstream call.
 * - **ordered**: the fault suite's partitioned flow (test/faults/partition-flow.ts): 8 partitions,
 *   deduplicated in PostgreSQL with the key recorded in the effect's transaction.
 *
 * Every status of the two consumers is one parsable log line (STATUS_MARK).
 */
import { uniqueName } from '../helpers/broker';
import { logLine, PERMANENT_RULES, STATUS_MARK, STATUS_OBJECT, workConfig } from '../faults/fault-flow';
import { partitionFlow, partitionNames, type PartitionNames } from '../faults/partition-flow';

export const PARTITIONS = 8;

export interface SoakNames {
  exchange: string;
  routingKey: string;
  mainQueue: string;
  retryQueue: string;
  parkingQueue: string;
  /** The outbox table the soak writes events into and the relays publish from. */
  outboxTable: string;
  dedupePrefix: string;
  /** The events stream on the cluster: its own exchange and queues, its deduplication table. */
  events: { exchange: string; routingKey: string; mainQueue: string; retryQueue: string; parkingQueue: string; dedupeTable: string };
  ordered: PartitionNames;
}

export function soakNames(): SoakNames {
  const base = uniqueName('soak');
  return {
    exchange: `${base}.exchange`,
    routingKey: 'work',
    mainQueue: `${base}.main`,
    retryQueue: `${base}.retry`,
    parkingQueue: `${base}.parking`,
    outboxTable: `${base.replace(/[^A-Za-z0-9_]/g, '_')}_events`,
    dedupePrefix: `${base}:`,
    events: {
      exchange: `${base}.events`,
      routingKey: 'events',
      mainQueue: `${base}.events.main`,
      retryQueue: `${base}.events.retry`,
      parkingQueue: `${base}.events.parking`,
      dedupeTable: `${base.replace(/[^A-Za-z0-9_]/g, '_')}_events_dedupe`,
    },
    ordered: partitionNames('soak-ordered'),
  };
}

/** The retry tiers of the work stream: 8 attempts wait 1 + 5 + 15 + 30 × 4 s in all, longer than the longest outage (60 s). */
export const RETRY_TIERS = '1s, 5s, 15s, 30s';
export const MAX_ATTEMPTS = 8;

const PREPARE = `msg.url = env.get('DOWNSTREAM_URL');
msg.headers = { 'content-type': 'application/json' };
msg.payload = { id: msg.amqp.properties.messageId, via: msg.amqp.consumerTag + (msg.amqp.redelivered ? ' redelivered' : '') + ' attempt ' + msg.retry.attempt };
return msg;`;

const CHECK = `if (msg.statusCode === 200) return [msg, null];
msg.error = { message: 'HTTP ' + msg.statusCode + ' from the downstream' };
return [null, msg];`;

const statusLog = (id: string, z: string, scope: string[]): Record<string, unknown>[] => [
  { id: `${id}-status`, type: 'status', z, name: '', scope, x: 120, y: 300, wires: [[`${id}-status-log`]] },
  logLine(`${id}-status-log`, z, 'status', STATUS_MARK, STATUS_OBJECT, 300, 300),
];

const QUORUM = '{"x-queue-type":"quorum"}';

/** A retry consumer of the soak's (kill switch on, deduplicated by messageId, paused while its store is down) into the downstream call. */
const consumer = (id: string, name: string, z: string, config: string, dedupe: string, y: number): Record<string, unknown> => ({
  id,
  type: 'retry-consumer',
  z,
  name,
  config,
  mode: 'retry',
  prefetch: '20',
  settleTimeout: '30',
  parkingWatch: '0',
  decode: 'auto',
  invalidBody: 'park',
  dedupe,
  dedupeKeyType: 'messageId',
  dedupeNoKey: 'process',
  dedupeStoreDown: 'pause',
  circuit: true,
  x: 120,
  y,
  wires: [['s-prepare']],
});

/** The events stream's part: the cluster's broker config (CLUSTER_AMQP_URL), its quorum topology, its consumer deduplicating in PostgreSQL. */
function eventsNodes(names: SoakNames, z: string): Record<string, unknown>[] {
  const e = names.events;
  return [
    { id: 's-cbroker', type: 'retry-broker', name: 'soak cluster', url: '${CLUSTER_AMQP_URL}', host: '127.0.0.1', port: '5672', vhost: '/', tls: false, heartbeat: '30', reconnectMax: '5', managementUrl: '' },
    { id: 's-pdedupe', type: 'retry-dedupe', name: 'events processed', kind: 'postgres', postgres: 's-db', table: e.dedupeTable, mode: 'declare', retentionHours: '24', leaseSeconds: '20' },
    workConfig('s-econfig', 's-cbroker', e, {
      retryDelay: RETRY_TIERS,
      maxAttempts: String(MAX_ATTEMPTS),
      errorRules: PERMANENT_RULES.map((rule) => ({ ...rule })),
      mainQueueArgs: QUORUM,
      retryQueueArgs: QUORUM,
      parkingQueueArgs: QUORUM,
    }),
    { id: 's-relay', type: 'outbox-relay', z, name: 'relay', broker: 's-cbroker', postgres: 's-db', table: names.outboxTable, mode: 'declare', pollSeconds: '1', backoffSeconds: '0.5', backoffMaxSeconds: '2', maxAttempts: '1000', x: 120, y: 200, wires: [[]] },
    consumer('s-econsumer', 'consume events', z, 's-econfig', 's-pdedupe', 140),
  ];
}

function workFlow(names: SoakNames, options: { redisUrl: string; downstreamUrl: string }): Record<string, unknown>[] {
  const z = 's-tab';
  const fn = (id: string, name: string, func: string, outputs: number, wires: string[][]): Record<string, unknown> => ({ id, type: 'function', z, name, func, outputs, noerr: 0, initialize: '', finalize: '', libs: [], x: 300, y: 80, wires });
  return [
    { id: z, type: 'tab', label: 'soak work', env: [{ name: 'DOWNSTREAM_URL', value: options.downstreamUrl, type: 'str' }] },
    { id: 's-db', type: 'retry-postgres', name: 'soak database', url: '${DATABASE_URL}', host: '127.0.0.1', port: '5432', database: 'postgres', poolSize: '10' },
    { id: 's-dedupe', type: 'retry-dedupe', name: 'processed', kind: 'redis', url: options.redisUrl, prefix: names.dedupePrefix, retentionHours: '24', leaseSeconds: '20' },
    { id: 's-broker', type: 'retry-broker', name: 'soak broker', url: '${AMQP_URL}', host: '127.0.0.1', port: '5672', vhost: '/', tls: false, heartbeat: '30', reconnectMax: '5', managementUrl: '' },
    workConfig('s-config', 's-broker', names, { retryDelay: RETRY_TIERS, maxAttempts: String(MAX_ATTEMPTS), errorRules: PERMANENT_RULES.map((rule) => ({ ...rule })) }),
    consumer('s-consumer', 'consume work', z, 's-config', 's-dedupe', 80),
    ...eventsNodes(names, z),
    fn('s-prepare', 'call the downstream', PREPARE, 1, [['s-http']]),
    { id: 's-http', type: 'http request', z, name: 'downstream', method: 'POST', ret: 'obj', paytoqs: 'ignore', url: '', tls: '', persist: false, proxy: '', insecureHTTPParser: false, authType: '', senderr: false, headers: [], x: 480, y: 80, wires: [['s-check']] },
    fn('s-check', '200?', CHECK, 2, [['s-ack'], ['s-retry']]),
    { id: 's-http-catch', type: 'catch', z, name: 'call failed', scope: ['s-http'], uncaught: false, x: 480, y: 160, wires: [['s-retry']] },
    { id: 's-ack', type: 'retry-settle', z, name: 'ack', action: 'ack', reason: '', x: 660, y: 80, wires: [] },
    { id: 's-retry', type: 'retry-settle', z, name: 'retry', action: 'retry', reason: '', x: 660, y: 160, wires: [] },
    ...statusLog('s', z, ['s-consumer', 's-econsumer']),
  ];
}

/** The broker configs' heartbeat (s): a connection held open but silent is noticed within two of them. */
export const HEARTBEAT_S = 5;

/** Both parts, one deploy. */
export function soakFlow(names: SoakNames, options: { redisUrl: string; downstreamUrl: string }): Record<string, unknown>[] {
  const nodes = [...workFlow(names, options), ...partitionFlow(names.ordered, { partitions: PARTITIONS, downstreamMs: 2, leaseSeconds: 20 })];
  return nodes.map((node) => (node.type === 'retry-broker' ? { ...node, heartbeat: String(HEARTBEAT_S) } : node));
}
