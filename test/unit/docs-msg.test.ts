/**
 * docs/msg.md's first table (a retry consumer's msg) names every field the consumer sets, and only
 * those. The fields are read from msgs the consumer's own pure functions build (deliveredOf, toMsg)
 * for deliveries with every optional part: all properties, a retry's x-death, a trace context, a
 * deduplication key, a partition; and a forged x-death. A field the consumer gains shows here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ConsumeMessage, MessageProperties } from 'amqplib';
import { deliveredOf } from '../../src/lib/consume/delivered';
import { CONSUMED_PROPERTY_KEYS, retryInfo } from '../../src/lib/message';
import { toMsg } from '../../src/nodes/retry-consumer/delivered-msg';
import { MsgIds } from '../../src/nodes/retry-consumer/msg-ids';
import { codeSpans, tableRows } from '../helpers/markdown-tables';

const ROOT = path.resolve(__dirname, '../..');
const MAIN = 'orders';
/** Node-RED's own msg fields, documented by Node-RED. */
const NODE_RED_FIELDS = ['_msgid'];

function delivery(headers: Record<string, unknown>): ConsumeMessage {
  const properties = Object.fromEntries(CONSUMED_PROPERTY_KEYS.map((key) => [key, key === 'contentType' ? 'application/json' : `${key}-1`]));
  return {
    content: Buffer.from('{"order":7}'),
    fields: { deliveryTag: 9, redelivered: true, exchange: 'orders.in', routingKey: 'order.created', consumerTag: 'ctag-1' },
    properties: { ...properties, headers } as unknown as MessageProperties,
  };
}

const RETRIED = {
  'x-death': [{ queue: MAIN, reason: 'rejected', count: 2, exchange: 'orders.in', 'routing-keys': ['order.created'], time: { '!': 'timestamp', value: 1_795_843_560 } }],
  'x-first-death-reason': 'rejected',
  'retry-attempt': 2,
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  tracestate: 'vendor=1',
};
const FORGED = { 'x-death': [{ queue: MAIN, reason: 'rejected', count: 'abc' }] };

/** The fields of the msg a consumer sends for this delivery: `msg.<key>`, and `msg.amqp.<key>`, `msg.retry.<key>` one by one. */
function fieldsOf(headers: Record<string, unknown>): string[] {
  const message = delivery(headers);
  const retry = retryInfo(message.properties.headers, MAIN, 5);
  const { delivered } = deliveredOf('d-1', message, retry, { configId: 'c1', mainQueue: MAIN, decode: 'auto' }, 'order-7');
  const msg = toMsg(delivered, new MsgIds(), 3);
  return Object.entries(msg).flatMap(([key, value]) => {
    if (NODE_RED_FIELDS.includes(key)) return [];
    const field = `msg.${key}`;
    const nested = value !== null && typeof value === 'object' && !Array.isArray(value) && !Buffer.isBuffer(value) && key !== 'payload';
    return nested ? Object.keys(value).map((name) => `${field}.${name}`) : [field];
  });
}

/** The fields msg.md's first table names: `msg.a.b`, then `.c` for `msg.a.c`. */
function documentedFields(): string[] {
  const page = readFileSync(path.join(ROOT, 'docs/msg.md'), 'utf8');
  const fields: string[] = [];
  for (const [cell = ''] of tableRows(page, /^\|\s*property\s*\|\s*type\s*\|/, /From a retry consumer/)) {
    let parent = '';
    for (const span of codeSpans(cell)) {
      const field = span.startsWith('.') ? `${parent}${span}` : span;
      parent = field.slice(0, field.lastIndexOf('.'));
      fields.push(field);
    }
  }
  return fields;
}

describe('docs/msg.md lists the fields a retry consumer sets', function () {
  it('builds the msg the consumer sends, every optional part present', function () {
    const fields = fieldsOf(RETRIED);
    for (const field of ['msg.amqp.partition', 'msg.amqp.dedupe', 'msg.traceparent', 'msg.tracestate', 'msg.retry.deaths']) assert.ok(fields.includes(field), `${field} in ${fields.join(', ')}`);
    assert.ok(fieldsOf(FORGED).includes('msg.retry.malformed'));
  });

  it('has a row for every field the consumer sets, and none it does not', function () {
    const set = new Set([...fieldsOf(RETRIED), ...fieldsOf(FORGED)]);
    const documented = new Set(documentedFields());
    assert.deepEqual([...set].filter((field) => !documented.has(field)).sort(), [], 'set by the consumer, missing from docs/msg.md');
    assert.deepEqual([...documented].filter((field) => !set.has(field)).sort(), [], 'in docs/msg.md, never set by the consumer');
  });
});
