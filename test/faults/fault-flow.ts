/**
 * The flow the fault suite deploys, as a user would build it: retry consumer → process → the effect
 * (one row per processing in a PostgreSQL table without a unique constraint, so a repeated effect
 * shows) → record the processed id with a confirmed publish (retry-publish) → ack; poison → retry
 * (parked after 3 attempts); a failed effect or record → retry. With deduplication, the consumer
 * deduplicates by messageId in a PostgreSQL store of the same database, and the effect's transaction
 * records the key as processed. The downstream rows: 5 attempts, and the consumer's kill switch on or
 * off; the permanent-error row: poison fails as an HTTP 400 that a `permanent` rule of the retry
 * config matches. Every delivery of a poison message and every kill switch event is logged as one
 * parsable line.
 */
import { uniqueName } from '../helpers/broker';
import { statusKey } from '../../src/nodes/shared/i18n';
import { batchFaultFlow, type BatchFlowOptions } from './batch-flow';

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

/**
 * The flow's processing: poison fails (as an HTTP 400 answer when POISON_STATUS is set); anything
 * else is recorded with the time and the consumer tag that delivered it.
 */
const PROCESS = `if (env.get('DROP_FIRST') && msg.payload.copy === 1 && msg.retry.attempt === 1 && !msg.amqp.redelivered && msg.payload.n % 20 === 3) {
    return [null, null];
}
if (msg.payload.poison) {
    const status = Number(env.get('POISON_STATUS'));
    if (status) msg.statusCode = status;
    msg.error = { message: (status ? 'HTTP ' + status + ': ' : '') + 'poison message ' + msg.payload.n };
    return [null, msg];
}
msg.payload = { id: msg.amqp.properties.messageId, at: Date.now(), tag: msg.amqp.consumerTag };
msg.statements = [{ sql: 'INSERT INTO ' + env.get('EFFECTS_TABLE') + ' (message_id) VALUES ($1)', params: [msg.payload.id] }];
const slow = Number(env.get('SLOW_MS'));
if (slow > 0) {
    setTimeout(() => node.send([msg, null]), slow);
    return null;
}
return [msg, null];`;

const QUORUM = '{"x-queue-type":"quorum"}';

/** The kill switch of the downstream outage row: trips within seconds of an outage, probes every 5 s doubling to 20 s. */

/** The retry config's error rules of the permanent-error row: any HTTP 4xx answer is permanent. */
export const PERMANENT_RULES = [{ name: 'client error', match: 'status', value: '4xx', kind: 'permanent' }] as const;

export interface FaultFlowOptions {
  /** Every queue of the topology is a quorum queue (the cluster rows): the retry config's queue type, and the retry queue's argument. */
  quorum?: boolean;
  dedupe?: boolean;
  redis?: string;
  outbox?: boolean;
  /** Attempts before parking (default 3). */
  maxAttempts?: number;
  /** The consumer's kill switch, on as a new node has it: every number at its default (issue 39: the defaults must protect a typical outage). */
  circuit?: boolean;
  /** The consumer's events output on, its kill switch events logged. */
  events?: boolean;
  /** Poison fails as an HTTP 400 and the retry config has PERMANENT_RULES. */
  permanent?: boolean;
  /** The deduplication store's claim lease (default 5 s). */
  leaseSeconds?: number;
  /** The consumer's settle timeout (default 10 s with deduplication, 60 s without). */
  settleTimeout?: number;
  /** About 5 % of the first copies' first deliveries (n % 20 = 3) are dropped by the flow: never settled, so the settle timeout retries them. */
  dropFirst?: boolean;
  /**
   * The record is published before the effect (process → record → effect → ack): with a store that
   * cannot share the effect's transaction (Redis), only the ack is left between the effect and its key
   * recorded as processed, and a failed record publish retries a message whose effect did not happen.
   */
  recordFirst?: boolean;
  /** The consumer's prefetch (default 20). */
  prefetch?: number;
  /** The processing step holds each msg this long before passing it on (ms; default 0): messages are in the flow when a fault hits. */
  slowMs?: number;
  /** The consumer in batch mode (batch-flow.ts): one INSERT and one record per batch, each item settled on its own. */
  batch?: BatchFlowOptions;
}

export function faultFlow(names: FaultNames, options: FaultFlowOptions = {}): Record<string, unknown>[] {
  const nodes = singleFlow(names, options);
  return options.batch ? batchFaultFlow(nodes, options.batch) : nodes;
}

function singleFlow(names: FaultNames, options: FaultFlowOptions): Record<string, unknown>[] {
  const z = 'faults-tab';
  const dedupe = options.dedupe === true;
  const [afterProcess, afterEffect, afterRecord] = options.recordFirst ? ['faults-record', 'faults-ack', 'faults-effect'] : ['faults-effect', 'faults-record', 'faults-ack'];
  const leaseSeconds = String(options.leaseSeconds ?? 5);
  const store = options.redis
    ? { id: 'faults-dedupe', type: 'retry-dedupe', name: 'processed', kind: 'redis', url: options.redis, prefix: `${names.dedupeTable}:`, retentionHours: '24', leaseSeconds }
    : { id: 'faults-dedupe', type: 'retry-dedupe', name: 'processed', kind: 'postgres', postgres: 'faults-db', table: names.dedupeTable, mode: 'declare', retentionHours: '24', leaseSeconds };
  return [
    {
      id: z,
      type: 'tab',
      label: 'fault suite',
      env: [
        { name: 'EFFECTS_TABLE', value: names.effectsTable, type: 'str' },
        { name: 'POISON_STATUS', value: options.permanent ? '400' : '', type: 'str' },
        { name: 'DROP_FIRST', value: options.dropFirst ? '1' : '', type: 'str' },
        { name: 'SLOW_MS', value: String(options.slowMs ?? 0), type: 'str' },
      ],
    },
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
    workConfig('faults-config', 'faults-broker', names, {
      retryDelay: '500',
      maxAttempts: String(options.maxAttempts ?? 3),
      ...(options.permanent ? { errorRules: PERMANENT_RULES.map((rule) => ({ ...rule })) } : {}),
      // The queue type field sets the main and parking queues' type (issue 53); the retry queue's is its own argument.
      ...(options.quorum ? { queueType: 'quorum' } : {}),
      retryQueueArgs: options.quorum ? QUORUM : '{}',
    }),
    {
      id: 'faults-consumer',
      type: 'retry-consumer',
      z,
      name: 'consume work',
      config: 'faults-config',
      mode: 'retry',
      prefetch: String(options.prefetch ?? 20),
      settleTimeout: String(options.settleTimeout ?? (dedupe ? 10 : 60)),
      parkingWatch: '30',
      decode: 'auto',
      invalidBody: 'park',
      ...(dedupe ? { dedupe: 'faults-dedupe', dedupeKeyType: 'messageId', dedupeNoKey: 'process', dedupeStoreDown: 'pause' } : {}),
      ...(options.circuit ? { circuit: true } : {}),
      // The second output: the kill switch's events, logged.
      ...(options.events ? { events: true, statsEvery: '0' } : {}),
      x: 120,
      y: 80,
      wires: options.events ? [['faults-process'], ['faults-circuit']] : [['faults-process']],
    },
    { id: 'faults-process', type: 'function', z, name: 'process', func: PROCESS, outputs: 2, noerr: 0, initialize: '', finalize: '', libs: [], x: 300, y: 80, wires: [[afterProcess], ['faults-retry', 'faults-seen']] },
    logLine('faults-seen', z, 'poison seen', SEEN_MARK, '{"id": amqp.properties.messageId, "attempt": retry.attempt}', 500, 120),
    {
      id: 'faults-circuit',
      type: 'switch',
      z,
      name: 'kill switch events',
      property: 'topic',
      propertyType: 'msg',
      rules: [{ t: 'eq', v: 'circuit', vt: 'str' }],
      checkall: 'true',
      repair: false,
      outputs: 1,
      x: 300,
      y: 260,
      wires: [['faults-circuit-log']],
    },
    logLine('faults-circuit-log', z, 'kill switch', CIRCUIT_MARK, '$merge([payload, {"at": $millis()}])', 500, 260),
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
      wires: [[afterEffect]],
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
      wires: [[afterRecord]],
    },
    { id: 'faults-ack', type: 'retry-settle', z, name: 'ack', action: 'ack', reason: '', x: 700, y: 60, wires: [] },
    { id: 'faults-retry', type: 'retry-settle', z, name: 'retry', action: 'retry', reason: '', x: 700, y: 120, wires: [] },
    { id: 'faults-catch', type: 'catch', z, name: 'record failed', scope: ['faults-record'], uncaught: false, x: 500, y: 160, wires: [['faults-retry']] },
    // Every status of the consumer and of the publishing node, as one parsable line in Node-RED's log.
    { id: 'faults-status', type: 'status', z, name: '', scope: ['faults-consumer', 'faults-record'], x: 120, y: 220, wires: [['faults-status-log']] },
    logLine('faults-status-log', z, 'status', STATUS_MARK, STATUS_OBJECT, 300, 220),
  ];
}

/** A retry-config named `work` declaring `names`' exchange (direct, its routing key) and queues; `more` sets the rest (delays, attempts, rules, arguments). */
export function workConfig(id: string, broker: string, names: Pick<FaultNames, 'exchange' | 'mainQueue' | 'routingKey' | 'retryQueue' | 'parkingQueue'>, more: Record<string, unknown>): Record<string, unknown> {
  return {
    id,
    type: 'retry-config',
    name: 'work',
    broker,
    mode: 'declare',
    mainExchange: names.exchange,
    mainExchangeType: 'direct',
    mainQueue: names.mainQueue,
    routingKeys: names.routingKey,
    retryExchange: '',
    retryExchangeType: 'fanout',
    retryQueue: names.retryQueue,
    parkingQueue: names.parkingQueue,
    mainQueueArgs: '{}',
    retryQueueArgs: '{}',
    parkingQueueArgs: '{}',
    maxAge: '0',
    ...more,
  };
}

export const STATUS_MARK = 'fault-status ';
/** What a status line carries (JSONata over a status node's msg). */
export const STATUS_OBJECT = '{"id": status.source.id, "fill": status.fill, "shape": status.shape, "text": status.text}';
/** One line per delivery of a poison message. */
export const SEEN_MARK = 'fault-seen ';
/** One line per kill switch event (the consumer's events output, topic `circuit`). */
export const CIRCUIT_MARK = 'fault-circuit ';

/** A debug node writing `<mark><JSON of the JSONata object>` as one line to Node-RED's log. */
export function logLine(id: string, z: string, name: string, mark: string, object: string, x: number, y: number): Record<string, unknown> {
  return { id, type: 'debug', z, name, active: true, tosidebar: false, console: true, tostatus: false, complete: `"${mark}" & $string(${object})`, targetType: 'jsonata', x, y, wires: [] };
}

/** The JSON objects of the log lines carrying `mark`, in order. */
export function markedLines<T>(lines: string[], mark: string): T[] {
  return lines.filter((line) => line.includes(mark)).map((line) => JSON.parse(line.slice(line.indexOf(mark) + mark.length)) as T);
}

export interface NodeStatusLine {
  id: string;
  fill?: string;
  shape?: string;
  text?: string;
}

/** The latest status of each node, from Node-RED's log lines. */
export function latestStatuses(lines: string[]): Map<string, NodeStatusLine> {
  const latest = new Map<string, NodeStatusLine>();
  for (const status of markedLines<NodeStatusLine>(lines, STATUS_MARK)) latest.set(status.id, status);
  return latest;
}

/** Consuming (green, or yellow while the parking queue holds messages) and connected: nothing stuck. */
export function healthy(latest: Map<string, NodeStatusLine>): boolean {
  const consumer = latest.get('faults-consumer');
  const record = latest.get('faults-record');
  return consumer?.shape === 'dot' && /in flight/.test(consumer.text ?? '') && record?.fill === 'green' && record.text === statusKey('retry-broker.status.connected');
}
