/**
 * The retry topology as a RabbitMQ definitions document: what `rabbitmqctl import_definitions`, the
 * management UI's "Import definitions" and `POST /api/definitions` read. Built from the same plan
 * declare mode asserts (plan.ts), so an operator who creates the topology themselves (check mode)
 * creates exactly what the consumer checks for. Pure: no users, permissions or passwords, ever.
 */
import type { QueueArguments } from './arguments';
import type { ExchangeType, TopologyPlan } from './plan';

export interface DefinitionsExchange {
  name: string;
  vhost: string;
  type: ExchangeType;
  durable: boolean;
  auto_delete: boolean;
  internal: boolean;
  arguments: Record<string, unknown>;
}

export interface DefinitionsQueue {
  name: string;
  vhost: string;
  durable: boolean;
  auto_delete: boolean;
  arguments: QueueArguments;
}

export interface DefinitionsBinding {
  source: string;
  vhost: string;
  destination: string;
  destination_type: 'queue';
  routing_key: string;
  arguments: Record<string, unknown>;
}

/** The parts of RabbitMQ's definitions format the retry topology uses. */
export interface RabbitDefinitions {
  vhosts: Array<{ name: string }>;
  exchanges: DefinitionsExchange[];
  queues: DefinitionsQueue[];
  bindings: DefinitionsBinding[];
}

/**
 * The plan's exchanges, queues (with every argument, `x-queue-type` included) and bindings in the
 * vhost, durable and not auto-deleted as declare mode declares them. The default exchange ('') is
 * never listed: it exists in every vhost and cannot be declared or bound.
 */
export function topologyDefinitions(plan: TopologyPlan, vhost = '/'): RabbitDefinitions {
  const name = vhost === '' ? '/' : vhost;
  return {
    vhosts: [{ name }],
    exchanges: plan.exchanges
      .filter((ex) => ex.name !== '')
      .map((ex) => ({ name: ex.name, vhost: name, type: ex.type, durable: true, auto_delete: false, internal: false, arguments: { ...ex.arguments } })),
    queues: plan.queues.map((q) => ({ name: q.name, vhost: name, durable: true, auto_delete: false, arguments: { ...q.arguments } })),
    bindings: plan.bindings
      .filter((b) => b.exchange !== '')
      .map((b) => ({ source: b.exchange, vhost: name, destination: b.queue, destination_type: 'queue', routing_key: b.routingKey, arguments: {} })),
  };
}

/** `orders-definitions.json`: the download's name, from the main queue (characters a file name cannot hold become `_`). */
export function definitionsFileName(mainQueue: string): string {
  const base = mainQueue.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '') || 'retry-topology';
  return `${base}-definitions.json`;
}
