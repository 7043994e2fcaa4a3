/**
 * @frankvdb/node-red-contrib-amqp (2.x), a fork of MeowWolf's with the same node types: its consumers
 * add a queue type (quorum by default) and queue arguments, its publishers confirms and a reconnect
 * option. Told apart from MeowWolf's by those fields. Pure.
 */
import { bool, jsonObject, text } from './core';
import type { Mapper } from './mapper';
import { MEOWWOLF_TYPES, meowwolfFamily } from './meowwolf';
import type { FlowNode } from './types';

export const FRANKVDB = '@frankvdb/node-red-contrib-amqp';
const OWN_FIELDS = ['queueType', 'queueArguments', 'waitForConfirms', 'reconnectOnError', 'autoCreateQueue', 'autoCreateExchangeBindings', 'showExchangeConfiguration'];

function isFrank(nodes: readonly FlowNode[]): boolean {
  return nodes.some((n) => (MEOWWOLF_TYPES as readonly string[]).includes(n.type) && OWN_FIELDS.some((f) => f in n));
}

/** The arguments a missing queue is created with: its type and arguments, as FrankVDB declared it. */
function queueArgs(node: FlowNode): Record<string, unknown> | undefined {
  const args = { ...(jsonObject(node.queueArguments) ?? {}) };
  const type = text(node.queueType);
  if (type !== '' && !('x-queue-type' in args)) args['x-queue-type'] = type;
  return Object.keys(args).length > 0 ? args : undefined;
}

function publisherNotes(node: FlowNode): string[] {
  return bool(node.waitForConfirms) ? [] : ['it did not wait for confirms: retry-publish always does'];
}

export const frankvdb: Mapper = meowwolfFamily(FRANKVDB, isFrank, queueArgs, publisherNotes);
