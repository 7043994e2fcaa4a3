/** Builds small test flows around one broker and one retry configuration with unique names. */
import type { Channel } from 'amqplib';
import type { ConsumerSession } from '../../src/lib/consume';
import type { ConsumerSessions } from '../../src/nodes/shared/consumer-sessions';
import { AMQP_URL, uniqueName } from './broker';
import { helper } from './node-red';

export interface Names {
  mainExchange: string;
  mainQueue: string;
  retryExchange: string;
  retryQueue: string;
  parkingQueue: string;
  routingKey: string;
}

export function uniqueNames(prefix: string): Names {
  const base = uniqueName(prefix);
  return {
    mainExchange: `${base}.main-exchange`,
    mainQueue: `${base}.main-queue`,
    retryExchange: `${base}.retry-exchange`,
    retryQueue: `${base}.retry-queue`,
    parkingQueue: `${base}.parking-queue`,
    routingKey: 'srvc.transact.cash',
  };
}

/**
 * The test broker node's name, unique per test process: its connection is `node-red <name>` on the
 * broker, and a test that has the broker close it must not close other runs' connections.
 */
export const TEST_BROKER_NAME = uniqueName('broker');

export function brokerNode(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'broker', type: 'retry-broker', name: TEST_BROKER_NAME, url: AMQP_URL, heartbeat: '30', ...extra };
}

export function configNode(names: Names, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'config',
    type: 'retry-config',
    broker: 'broker',
    mode: 'declare',
    mainExchange: names.mainExchange,
    mainExchangeType: 'direct',
    mainQueue: names.mainQueue,
    routingKeys: names.routingKey,
    retryExchange: names.retryExchange,
    retryExchangeType: 'fanout',
    retryQueue: names.retryQueue,
    retryDelay: '500',
    parkingQueue: names.parkingQueue,
    maxAttempts: '3',
    mainQueueArgs: '{}',
    retryQueueArgs: '{}',
    parkingQueueArgs: '{}',
    ...extra,
  };
}

export function consumerNode(wires: string[][], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'consumer', type: 'retry-consumer', z: 'flow', config: 'config', prefetch: '10', settleTimeout: '60', decode: 'auto', invalidBody: 'park', wires, ...extra };
}

export function tab(): Record<string, unknown> {
  return { id: 'flow', type: 'tab', label: 'test' };
}

/** The seed's classic topology (fanout retry exchange, 500 ms TTL) created with plain amqplib, as another tool would. */
export async function declareSeedTopology(ch: Channel, names: Names): Promise<void> {
  await ch.assertExchange(names.mainExchange, 'direct', { durable: true });
  await ch.assertExchange(names.retryExchange, 'fanout', { durable: true });
  await ch.assertQueue(names.mainQueue, { durable: true, arguments: { 'x-dead-letter-exchange': names.retryExchange } });
  await ch.assertQueue(names.retryQueue, { durable: true, arguments: { 'x-message-ttl': 500, 'x-dead-letter-exchange': names.mainExchange } });
  await ch.assertQueue(names.parkingQueue, { durable: true });
  await ch.bindQueue(names.mainQueue, names.mainExchange, names.routingKey);
  await ch.bindQueue(names.retryQueue, names.retryExchange, '');
}

/** The session a consumer node runs, found as end nodes find it: through the retry configuration that owns it. */
export function sessionOf(consumerId = 'consumer', configId = 'config'): ConsumerSession {
  const config = helper.getNode(configId) as unknown as { consumers: ConsumerSessions } | null;
  const session = config?.consumers.of(consumerId);
  if (!session) throw new Error(`retry configuration '${configId}' has no session of consumer '${consumerId}'`);
  return session;
}
