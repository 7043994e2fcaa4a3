/**
 * The fault suite's flow in batch mode (issue 51): the same flow as fault-flow.ts, the consumer in
 * batch mode, its processing one multi-row INSERT per batch msg through the same `outbox write`
 * (with deduplication its *Processed key* records every item's key in the transaction), one record
 * message per batch (the array of the processed items' records), and a retry-settle `ack` that
 * settles each item: poison items named in `msg.errors` (retried, or parked at once when the error
 * rules call them permanent), the others acked. With `bisect`, the flow names no item: a poison item
 * goes into the INSERT as a NULL id, PostgreSQL refuses the whole statement, and the `retry` node
 * (bisect on) splits the batch until the poison item is alone. A failed record publish retries the
 * whole batch (its msg.payload is then the records: not for a bisect row, which has no broker fault).
 */

export interface BatchFlowOptions {
  /** The consumer's batch size and batch wait (ms). */
  size: number;
  wait: number;
  /** The retry node splits a batch that failed as a whole; the flow names no failing item. */
  bisect?: boolean;
  /** At attempt 1 the flow gives the ack an index out of range (`msg.outcomes[size]`): nothing settled, the settle timeout retries. */
  badOutcomes?: boolean;
  /** The flow settles the first item on its own (its msg.amqp as a single msg, to the ack) before the batch reaches the ack. */
  settleFirst?: boolean;
}

/** One line per batch msg the processing saw (its size, how often bisect split it, whether it held the poison item). */
export const STATEMENT_MARK = 'fault-statement ';

/**
 * The processing of a batch msg: every item's delivery of a poison message logged (SEEN_MARK); poison
 * named in msg.errors (an HTTP 400 in the permanent rows), or with BISECT put into the INSERT as a NULL
 * id (the NOT NULL column refuses the whole statement); one INSERT of the ids; the records kept aside.
 */
const PROCESS_BATCH = `const items = msg.amqp.items;
const status = Number(env.get('POISON_STATUS'));
const bisect = env.get('BISECT') === '1';
const ids = [], records = [], errors = {};
const at = Date.now();
msg.payload.forEach((p, i) => {
    const item = items[i];
    const id = item.properties.messageId;
    if (p.poison) {
        node.log('fault-seen ' + JSON.stringify({ id, attempt: item.retry.attempt }));
        if (bisect) ids.push(null);
        else errors[i] = { message: (status ? 'HTTP ' + status + ': ' : '') + 'poison message ' + p.n, statusCode: status || undefined };
        return;
    }
    ids.push(id);
    records.push({ id, at, tag: item.consumerTag, attempt: item.retry.attempt });
});
node.log('${STATEMENT_MARK}' + JSON.stringify({ size: items.length, split: msg.amqp.batch.split, poison: ids.includes(null) || Object.keys(errors).length > 0 }));
if (Object.keys(errors).length > 0) msg.errors = errors;
else delete msg.errors;
msg.records = records;
msg.statements = [{ sql: 'INSERT INTO ' + env.get('EFFECTS_TABLE') + ' (message_id) SELECT unnest($1::text[])', params: [ids] }];
if (env.get('BAD_OUTCOMES') && items[0].retry.attempt === 1) msg.outcomes = { [items.length]: 'ack' };
if (env.get('SETTLE_FIRST')) node.send([null, { payload: msg.payload[0], amqp: items[0] }]);
const slow = Number(env.get('SLOW_MS'));
if (slow > 0) {
    setTimeout(() => node.send([msg, null]), slow);
    return null;
}
return [msg, null];`;

/** The record publish sends the batch's records as one message (the suite reads an array as many records). */
const RECORDS = `msg.payload = msg.records;
return msg;`;

/** A NOT NULL violation (the poison item in the bisect row) is permanent: the single item left is parked at attempt 1. */
const CONSTRAINT_RULE = { name: 'constraint', match: 'message', value: 'violates', kind: 'permanent' } as const;

/** The single-delivery fault flow (`nodes`) turned into its batch-mode version. */
export function batchFaultFlow(nodes: Record<string, unknown>[], batch: BatchFlowOptions): Record<string, unknown>[] {
  const z = 'faults-tab';
  const out = nodes.map((node): Record<string, unknown> => {
    switch (node.id) {
      case z:
        return { ...node, env: [...(node.env as unknown[]), { name: 'BISECT', value: batch.bisect ? '1' : '', type: 'str' }, { name: 'BAD_OUTCOMES', value: batch.badOutcomes ? '1' : '', type: 'str' }, { name: 'SETTLE_FIRST', value: batch.settleFirst ? '1' : '', type: 'str' }] };
      case 'faults-config':
        return batch.bisect ? { ...node, errorRules: [{ ...CONSTRAINT_RULE }, ...((node.errorRules as unknown[] | undefined) ?? [])] } : node;
      case 'faults-consumer':
        return { ...node, batch: true, batchSize: String(batch.size), batchWait: String(batch.wait) };
      case 'faults-process':
        return { ...node, name: 'process batch', func: PROCESS_BATCH, wires: [['faults-effect'], ['faults-ack']] };
      case 'faults-effect':
        return { ...node, wires: [['faults-records']] };
      case 'faults-retry':
        return { ...node, bisect: batch.bisect === true };
      default:
        return node;
    }
  });
  const records = { id: 'faults-records', type: 'function', z, name: 'records', func: RECORDS, outputs: 1, noerr: 0, initialize: '', finalize: '', libs: [], x: 450, y: 0, wires: [['faults-record']] };
  return [...out, records];
}
