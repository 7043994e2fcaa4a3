/**
 * The conversions every package shares: a broker node to a retry-broker, a consumer to a
 * retry-consumer with its retry-config (check mode on the existing queue), acks to retry-settle /
 * park-publisher, a publisher to a retry-publish. Each mapper reads its package's fields into these
 * shapes. Pure.
 */
import { type Conversion, nameOf } from './core';
import { change, parkPublisher, retryBroker, retryConfig, retryConsumer, retryPublish, retrySettle, scoped, switchOn, type BrokerFields } from './templates';
import { NODE_TYPE } from '../nodes/shared/node-types';
import type { FlowNode } from './types';

/** The old broker node becomes a retry-broker with the same id; user and password move into its credentials. */
export function convertBroker(ctx: Conversion, node: FlowNode, pkg: string, fields: BrokerFields, userField: string, notes: string[]): void {
  ctx.replace(node.id, retryBroker({ id: node.id, name: nameOf(node) }, fields));
  const old = ctx.credentialsOf(node);
  const user = old[userField] ?? '';
  const password = old.password ?? '';
  if (user !== '' || password !== '') ctx.credentials[node.id] = { user, password };
  const moved =
    user !== '' || password !== ''
      ? ['user and password moved into the retry-broker\'s credentials']
      : ctx.credentialsLeftOut
        ? ['credentials left out (--no-credentials): enter the user and password in the retry-broker']
        : ['no credentials in the input: enter the user and password in the retry-broker (guest only works from localhost)'];
  ctx.entry(node, pkg, 'converted', [NODE_TYPE.retryBroker], [...moved, ...notes]);
}

export interface ConsumerFields {
  broker: string;
  exchange: string;
  exchangeType: string;
  /** Whether the old node declared its exchange durable (default: it did). */
  exchangeDurable?: boolean;
  /** Empty: a server-named temporary queue. */
  queue: string;
  /** The old node declared its queue exclusive or auto-delete: it lived only while the old node ran. */
  temporary: boolean;
  routingKeys: string[];
  prefetch: number;
  queueArgs?: Record<string, unknown>;
  /** How the old node settled: acked on arrival, or by msgs sent back to it with msg.manualAck (MeowWolf), or by ack nodes. */
  acks: 'on-arrival' | 'msg-manualAck' | 'ack-nodes';
}

/** Where an old consumer's messages wait now, and what the report says about its queue. */
function queueOf(node: FlowNode, f: ConsumerFields, notes: string[]): string {
  if (f.queue === '') {
    const name = `migrated.${node.id}`;
    notes.push(`its server-named temporary queue becomes the durable queue '${name}' (created when missing): messages now wait while Node-RED is down; delete the queue when the flow goes`);
    return name;
  }
  if (f.temporary) notes.push(`queue '${f.queue}' was exclusive or auto-delete (it lived while the old node ran): it is used as it is when it exists, else created durable`);
  return f.queue;
}

/** What to do when the old node had no broker selected, or one that is not in the flows (abreits' `server: ""` too). */
function brokerNote(ctx: Conversion, broker: string, where: string): string[] {
  if (broker === '') return [`no broker was selected: choose a retry-broker in ${where}`];
  return ctx.original(broker) ? [] : [`its broker '${broker}' is not in these flows: choose a retry-broker in ${where}`];
}

/** The converted node expects the exchange its old self declared: remembered for the report (the broker's own amq.* always exist). */
function declared(ctx: Conversion, node: FlowNode, broker: string, name: string, type: string, durable = true): void {
  if (name !== '' && !name.startsWith('amq.')) ctx.exchanges.push({ name, type, durable, broker, by: node.id });
}

/** The old consumer becomes a retry-consumer (same id, same wires) with a retry-config in check mode on its queue. */
export function convertConsumer(ctx: Conversion, node: FlowNode, pkg: string, f: ConsumerFields, notes: string[]): void {
  notes.unshift(...brokerNote(ctx, f.broker, 'its retry-config'));
  const queue = queueOf(node, f, notes);
  declared(ctx, node, f.broker, f.exchange, f.exchangeType, f.exchangeDurable);
  const keys = f.exchange === '' || f.exchangeType === 'fanout' ? [] : f.routingKeys.length > 0 ? f.routingKeys : [queue];
  const config = retryConfig(
    { id: ctx.idFor(node.id, 'config'), name: `${queue} (converted)` },
    { broker: f.broker, mainExchange: f.exchange, mainExchangeType: f.exchangeType, mainQueue: queue, routingKeys: keys.join(','), ...(f.queueArgs ? { mainQueueArgs: f.queueArgs } : {}) },
  );
  ctx.add(config, node.id);
  ctx.added(config, `check mode on '${queue}' (never redeclared), declares only '${queue}.retry' and '${queue}.parking'`, node.id);
  const prefetch = f.prefetch >= 1 ? Math.min(Math.round(f.prefetch), 65535) : 10;
  if (f.prefetch < 1) notes.push('prefetch 0 (unlimited) is not allowed: 10 now');
  ctx.replace(node.id, retryConsumer({ id: node.id, z: node.z, x: node.x, y: node.y, name: nameOf(node) }, config.id, prefetch, node.wires ?? []));
  if (f.acks === 'on-arrival') (ctx.autoAck === 'settle-at-end' ? settleAtEnd : ackOnArrival)(ctx, node, notes);
  if (f.acks === 'msg-manualAck') manualAckRouter(ctx, node, notes);
  ctx.entry(node, pkg, 'converted', [NODE_TYPE.retryConsumer, NODE_TYPE.retryConfig], notes);
}

/** The old node acked each message as it arrived: a retry-settle (ack) wired from the consumer does the same. */
function ackOnArrival(ctx: Conversion, node: FlowNode, notes: string[]): void {
  const ack = ctx.add(retrySettle(ctx.near(node, 'ack', 'ack on arrival', 1, 1), 'ack'), node.id);
  const consumer = ctx.node(node.id);
  if (consumer?.wires) consumer.wires = [[...(consumer.wires[0] ?? []), ack.id]];
  ctx.added(ack, `acks each message as it arrives, as '${nameOf(node) || node.type}' did: move it to the end of the flow to retry and park failures`, node.id);
  notes.push('acked on arrival as before (a retry-settle wired from it): a failure in the flow is not retried until the ack moves to the flow\'s end');
}

/** The nodes a consumer's msgs reach through wires (link nodes not followed). */
function downstream(ctx: Conversion, from: FlowNode): FlowNode[] {
  const seen = new Set<string>();
  const queue = [...(from.wires ?? []).flat()];
  while (queue.length > 0) {
    const id = queue.shift() ?? '';
    if (seen.has(id) || id === from.id) continue;
    seen.add(id);
    queue.push(...(ctx.node(id)?.wires ?? []).flat());
  }
  return [...seen].map((id) => ctx.node(id)).filter((n): n is FlowNode => n !== undefined);
}

/**
 * With ConvertOptions.autoAck 'settle-at-end', a consumer that acked on arrival acks when its flow's
 * end completes (a complete node on the first node without outputs, debug nodes only when nothing
 * else ends the flow) and retries a msg that a node downstream threw on (a catch node).
 */
function settleAtEnd(ctx: Conversion, node: FlowNode, notes: string[]): void {
  const reached = downstream(ctx, node);
  const ends = reached.filter((n) => (n.wires ?? []).every((port) => port.length === 0));
  const end = ends.find((n) => n.type !== 'debug') ?? ends[0];
  if (!end) return ackOnArrival(ctx, node, notes);
  const ack = retrySettle(ctx.near(node, 'ack', 'ack', 2, 2), 'ack');
  const retry = retrySettle(ctx.near(node, 'retry', 'retry', 3, 2), 'retry');
  const done = scoped(ctx.near(node, 'done', `${nameOf(end) || end.type} done`, 2, 1), 'complete', [end.id], [[ack.id]]);
  const failed = scoped(ctx.near(node, 'failed', 'failed', 3, 1), 'catch', reached.map((n) => n.id), [[retry.id]]);
  for (const added of [retry, ack, failed, done]) ctx.add(added, node.id);
  ctx.added(done, `acks when '${nameOf(end) || end.id}' completes`, node.id);
  ctx.added(failed, 'retries a msg a node downstream threw on (parked after the last attempt)', node.id);
  for (const added of [ack, retry]) ctx.added(added, 'settles the consumer\'s msgs at the end of the flow', node.id);
  notes.push(`it acked on arrival; now acked when '${nameOf(end) || end.id}' completes, retried when a node downstream throws, parked after the last attempt`);
}

/**
 * MeowWolf's manual ack: msgs wired back into the consumer carry msg.manualAck (ack, nack, reject,
 * with requeue). A switch on it leads to retry-settle (ack), retry-settle (retry: a nack or reject
 * that requeued) and park-publisher (one that did not: the old broker dropped or dead-lettered it).
 */
function manualAckRouter(ctx: Conversion, node: FlowNode, notes: string[]): void {
  const expression = `$exists(manualAck) and manualAck.ackMode in ["nack", "nackAll", "reject"] ? (manualAck.requeue = false ? "park" : "retry") : "ack"`;
  const ack = retrySettle(ctx.near(node, 'ack', 'ack', 2, 2), 'ack');
  const retry = retrySettle(ctx.near(node, 'retry', 'retry', 3, 2), 'retry', 'nack');
  const park = parkPublisher(ctx.near(node, 'park', 'park', 4, 2), 'rejected without requeue');
  const router = switchOn(ctx.near(node, 'settle', 'msg.manualAck', 3, 1), expression, ['ack', 'retry', 'park'], [[ack.id], [retry.id], [park.id]]);
  ctx.moveInputs(node.id, [router.id]);
  for (const added of [park, retry, ack, router]) ctx.add(added, node.id);
  ctx.added(router, 'routes the msgs that came back with msg.manualAck: ack → ack, nack / reject → retry, requeue false → park', node.id);
  for (const added of [ack, retry, park]) ctx.added(added, 'settles what msg.manualAck asked for', node.id);
  notes.push('msgs wired back into it with msg.manualAck now go to a switch: ack → retry-settle (ack), nack / reject → retry-settle (retry via the retry queue, not a requeue), requeue false → park-publisher; ackAll / nackAll settle only the msg itself');
}

export interface PublishFieldsIn {
  broker: string;
  exchange: string;
  /** The exchange's type and durability as the old node declared it (it declared the exchange it published to). */
  exchangeType: string;
  exchangeDurable?: boolean;
  /** The routing key, or an expression of `routingKeyType` (msg, flow, global, jsonata). */
  routingKey: string;
  routingKeyType: string;
  /** msg.routingKey overrides a fixed routing key (MeowWolf). */
  msgRoutingKey: boolean;
  /** AMQP properties the node set on every message (msg.properties wins). */
  properties?: Record<string, unknown>;
}

/**
 * The old publisher becomes a retry-publish (same id). The routing key goes to msg.topic and fixed
 * properties into msg.properties through a change node in front of it when the old node had them.
 */
export function convertPublisher(ctx: Conversion, node: FlowNode, pkg: string, f: PublishFieldsIn, notes: string[]): void {
  notes.unshift(...brokerNote(ctx, f.broker, 'it'));
  declared(ctx, node, f.broker, f.exchange, f.exchangeType, f.exchangeDurable);
  const props = f.properties && Object.keys(f.properties).length > 0 ? f.properties : undefined;
  const rules: Array<Record<string, unknown>> = [];
  const dynamicKey = f.routingKeyType !== 'str' || f.msgRoutingKey;
  if (f.routingKeyType !== 'str') rules.push({ t: 'set', p: 'topic', pt: 'msg', to: f.routingKey, tot: f.routingKeyType });
  else if (f.msgRoutingKey) rules.push({ t: 'set', p: 'topic', pt: 'msg', to: `$exists(routingKey) and routingKey != "" ? routingKey : ${JSON.stringify(f.routingKey)}`, tot: 'jsonata' });
  if (props) rules.push({ t: 'set', p: 'properties', pt: 'msg', to: `$merge([${JSON.stringify(props)}, $exists(properties) ? properties : {}])`, tot: 'jsonata' });
  const fixedKey = dynamicKey ? '' : f.routingKey;
  ctx.replace(node.id, retryPublish({ id: node.id, z: node.z, x: node.x, y: node.y, name: nameOf(node) }, { broker: f.broker, exchange: f.exchange, routingKey: fixedKey }, node.wires ?? []));
  if (rules.length > 0) {
    const prepare = change(ctx.near(node, 'prepare', 'as the old publisher', -1, -1), rules, [[node.id]]);
    ctx.moveInputs(node.id, [prepare.id]);
    ctx.add(prepare, node.id);
    ctx.added(prepare, 'sets msg.topic (the routing key) and msg.properties as the old publisher did', node.id);
    notes.push('a change node in front of it sets the routing key (msg.topic) and the fixed properties (msg.properties wins, as before)');
  }
  notes.push('publishes with confirms and mandatory: an unroutable message is an error now, not dropped silently');
  ctx.entry(node, pkg, 'converted', [NODE_TYPE.retryPublish], notes);
}
