/**
 * The package's nodes as the editor saves them: every property a deployed node reads, with the
 * editor's defaults (each node's dialog and property tables: src/nodes/<type>/editor.ts, properties.ts). The converter fills in
 * what the old node said. Pure.
 */
import { NODE_TYPE } from '../nodes/shared/node-types';
import { NUMBER_FIELDS, PROPERTY_VERSIONS } from './node-tables';
import type { FlowNode } from './types';

/** The editor's number defaults of a node type (its fields' fallbacks). */
function numbers<T extends keyof typeof NUMBER_FIELDS>(type: T): { [K in keyof (typeof NUMBER_FIELDS)[T]]: number } {
  return Object.fromEntries(Object.entries(NUMBER_FIELDS[type]).map(([name, field]) => [name, (field as { fallback: number }).fallback])) as { [K in keyof (typeof NUMBER_FIELDS)[T]]: number };
}

const version = (type: string): number => PROPERTY_VERSIONS[type]?.version ?? 1;

/** The defaults of the text properties a node type gained over its versions (a new node is saved at the latest, so the editor fills none). */
function addedTexts(type: string): Record<string, string> {
  const added = PROPERTY_VERSIONS[type]?.added ?? {};
  return Object.fromEntries(Object.entries(added).flatMap(([name, a]) => (a.value === undefined ? [] : [[name, a.value]])));
}

type Place = Pick<FlowNode, 'id' | 'z' | 'x' | 'y' | 'name'>;

function placed(place: Place): FlowNode {
  const node: FlowNode = { id: place.id, type: '', name: place.name ?? '' };
  if (place.z !== undefined) node.z = place.z;
  if (place.x !== undefined) node.x = place.x;
  if (place.y !== undefined) node.y = place.y;
  return node;
}

export interface BrokerFields {
  host: string;
  port: number;
  vhost: string;
  tls: boolean;
  heartbeat?: number;
}

export function retryBroker(place: Place, f: BrokerFields): FlowNode {
  return {
    ...placed(place),
    ...addedTexts(NODE_TYPE.retryBroker),
    type: NODE_TYPE.retryBroker,
    url: '',
    urlType: 'str',
    host: f.host || '127.0.0.1',
    hostType: 'str',
    ...numbers(NODE_TYPE.retryBroker),
    port: f.port || (f.tls ? 5671 : 5672),
    vhost: f.vhost || '/',
    tls: f.tls,
    tlsConfig: '',
    ...(f.heartbeat !== undefined ? { heartbeat: f.heartbeat } : {}),
    managementUrl: '',
    managementUrlType: 'str',
    version: version(NODE_TYPE.retryBroker),
  };
}

export interface ConfigFields {
  broker: string;
  mainExchange: string;
  mainExchangeType: string;
  mainQueue: string;
  routingKeys: string;
  mainQueueArgs?: Record<string, unknown>;
}

/** A retry configuration in check mode on an existing main queue: only its retry and parking queues are declared. */
export function retryConfig(place: Place, f: ConfigFields): FlowNode {
  const node = placed(place);
  delete node.x;
  delete node.y;
  delete node.z;
  return {
    ...node,
    ...addedTexts(NODE_TYPE.retryConfig),
    type: NODE_TYPE.retryConfig,
    broker: f.broker,
    mode: 'check',
    existingQueue: true,
    mainExchange: f.mainExchange,
    mainExchangeType: f.mainExchange === '' ? 'direct' : f.mainExchangeType,
    mainQueue: f.mainQueue,
    routingKeys: f.routingKeys,
    alternateExchange: '',
    unroutedQueue: '',
    retryExchange: '',
    retryExchangeType: 'fanout',
    retryQueue: '',
    retryDelay: '5000',
    parkingQueue: '',
    ...numbers(NODE_TYPE.retryConfig),
    mainQueueArgs: JSON.stringify(f.mainQueueArgs ?? {}),
    retryQueueArgs: '{}',
    parkingQueueArgs: '{}',
    errorRules: [],
    version: version(NODE_TYPE.retryConfig),
  };
}

export function retryConsumer(place: Place, config: string, prefetch: number, wires: string[][]): FlowNode {
  return {
    ...placed(place),
    ...addedTexts(NODE_TYPE.retryConsumer),
    type: NODE_TYPE.retryConsumer,
    config,
    ...numbers(NODE_TYPE.retryConsumer),
    prefetch,
    decode: 'auto',
    invalidBody: 'park',
    mode: 'retry',
    events: false,
    dedupe: '',
    dedupeKey: '',
    dedupeKeyType: 'messageId',
    dedupeNoKey: 'process',
    dedupeStoreDown: 'pause',
    circuit: false,
    batch: false,
    outputs: 1,
    version: version(NODE_TYPE.retryConsumer),
    wires: [wires[0] ?? []],
  };
}

export function retrySettle(place: Place, action: 'ack' | 'retry', reason = ''): FlowNode {
  return { ...placed(place), type: NODE_TYPE.retrySettle, action, reason, wires: [] };
}

export function parkPublisher(place: Place, reason: string): FlowNode {
  return { ...placed(place), type: NODE_TYPE.parkPublisher, reason, wires: [[]] };
}

export interface PublishFields {
  broker: string;
  exchange: string;
  routingKey: string;
  persistent?: boolean;
}

export function retryPublish(place: Place, f: PublishFields, wires: string[][]): FlowNode {
  return {
    ...placed(place),
    type: NODE_TYPE.retryPublish,
    broker: f.broker,
    mode: 'publish',
    exchange: f.exchange,
    routingKey: f.routingKey,
    persistent: f.persistent ?? true,
    declareQueue: '',
    contentType: '',
    keepIds: false,
    wires: [wires[0] ?? []],
  };
}

/** A core comment node: what was not converted and why. */
export function comment(place: Place, text: string, info: string): FlowNode {
  return { ...placed(place), type: 'comment', name: text, info, wires: [] };
}

/** A core change node. */
export function change(place: Place, rules: Array<Record<string, unknown>>, wires: string[][]): FlowNode {
  return { ...placed(place), type: 'change', rules, action: '', property: '', from: '', to: '', reg: false, wires };
}

/** A core switch node on a JSONata expression, one output per value. */
export function switchOn(place: Place, expression: string, values: string[], wires: string[][]): FlowNode {
  return {
    ...placed(place),
    type: 'switch',
    property: expression,
    propertyType: 'jsonata',
    rules: values.map((v) => ({ t: 'eq', v, vt: 'str' })),
    checkall: 'false',
    repair: false,
    outputs: values.length,
    wires,
  };
}

/** A core catch or complete node scoped to some nodes. */
export function scoped(place: Place, type: 'catch' | 'complete', scope: string[], wires: string[][]): FlowNode {
  return type === 'catch' ? { ...placed(place), type, scope, uncaught: false, wires } : { ...placed(place), type, scope, uncaught: false, wires };
}
