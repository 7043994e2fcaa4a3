/**
 * Function nodes that use the old packages' msg API: abreits' `msg.amqpMessage` (its ackMsg / nackMsg /
 * rejectMsg, amqp-ack's too) and MeowWolf's `msg.manualAck`. They are kept as they are; the report
 * names each with what to change. Pure.
 */
import { text } from './core';
import type { FlowNode } from './types';

/** The code a function node runs: on message, on start, on stop. */
const CODE_FIELDS = ['func', 'initialize', 'finalize'];

const RULES: ReadonlyArray<{ test: RegExp; note: string }> = [
  { test: /amqpMessage\s*\.\s*ackMsg\s*\(/, note: 'msg.amqpMessage.ackMsg() is gone: send the msg to a retry-settle (ack) instead' },
  { test: /amqpMessage\s*\.\s*(nackMsg|rejectMsg)\s*\(/, note: 'msg.amqpMessage.nackMsg() / rejectMsg() are gone: send the msg to a retry-settle (retry), or a park-publisher to drop it' },
  { test: /amqpMessage(?!\s*\.\s*(ackMsg|nackMsg|rejectMsg)\s*\()/, note: 'msg.amqpMessage is gone: read msg.payload and msg.amqp (properties, headers, routing key)' },
  { test: /manualAck/, note: 'msg.manualAck only settles on the wire back to the converted consumer (now a switch): or send the msg to a retry-settle (ack / retry) or a park-publisher' },
];

/** What to change in a function node that calls the old packages' API; empty for any other node. */
export function oldApiNotes(node: FlowNode): string[] {
  if (node.type !== 'function') return [];
  const code = CODE_FIELDS.map((f) => text(node[f])).join('\n');
  return RULES.filter((rule) => rule.test.test(code)).map((rule) => rule.note);
}
