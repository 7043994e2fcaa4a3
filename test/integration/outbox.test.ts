/**
 * The transactional outbox in the Node-RED runtime, on the real PostgreSQL and the real broker: the
 * business row and its event in one transaction (both or neither), the relay publishing with confirms
 * (messageId = the row's id) and marking rows sent, unroutable rows retried and then failed (listed
 * and sent again by a msg), two relays sharing one table without publishing a row twice, per-key order,
 * and check mode naming a missing table.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, tab } from '../helpers/flows';
import { errorsOf, helper, lastStatus, loadFlow } from '../helpers/node-red';
import { DATABASE_URL } from '../helpers/private-stores';
import { PostgresDatabase } from '../../src/lib/postgres';

type Msg = Record<string, any>;

describe('transactional outbox in the Node-RED runtime (real PostgreSQL and broker)', function () {
  let broker: Broker;
  let db: PostgresDatabase;
  let tag: string;
  let outbox: string;
  let orders: string;
  let exchange: string;
  let queue: string;

  beforeEach(async () => {
    broker = await Broker.open();
    db = new PostgresDatabase({ connectionString: DATABASE_URL });
    tag = randomBytes(4).toString('hex');
    outbox = `test_outbox_${tag}`;
    orders = `test_orders_${tag}`;
    exchange = `test-outbox-${tag}`;
    queue = `test-outbox-${tag}.events`;
    await db.query(`CREATE TABLE ${orders} (id text PRIMARY KEY, amount numeric NOT NULL CHECK (amount > 0))`);
    const ch = await broker.ch();
    await ch.assertExchange(exchange, 'direct', { durable: false, autoDelete: false });
    await ch.assertQueue(queue, { durable: false });
    await ch.bindQueue(queue, exchange, 'order.created');
    broker.track('queue', queue);
    broker.track('exchange', exchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
    await db.query(`DROP TABLE IF EXISTS ${orders}, ${outbox}`);
    await db.close();
  });

  function nodes(relays: number, relay: Record<string, unknown> = {}, write: Record<string, unknown> = {}): Array<Record<string, unknown>> {
    return [
      tab(),
      brokerNode(),
      { id: 'db', type: 'retry-postgres', url: DATABASE_URL },
      { id: 'write', type: 'outbox-write', z: 'flow', postgres: 'db', table: outbox, mode: 'declare', event: true, exchange, routingKey: 'order.created', wires: [['written']], ...write },
      { id: 'written', type: 'helper', z: 'flow' },
      { id: 'catch', type: 'catch', z: 'flow', scope: ['write'], wires: [['caught']] },
      { id: 'caught', type: 'helper', z: 'flow' },
      ...Array.from({ length: relays }, (_, i) => ({ id: `relay${i}`, type: 'outbox-relay', z: 'flow', broker: 'broker', postgres: 'db', table: outbox, mode: 'declare', pollSeconds: '0.2', backoffSeconds: '0.05', backoffMaxSeconds: '0.1', wires: [['relayed']], ...relay })),
      { id: 'relayed', type: 'helper', z: 'flow' },
    ];
  }

  async function load(relays = 1, relay: Record<string, unknown> = {}, write: Record<string, unknown> = {}): Promise<{ written: Msg[]; caught: Msg[]; relayed: Msg[] }> {
    await loadFlow(nodes(relays, relay, write));
    const written: Msg[] = [];
    const caught: Msg[] = [];
    const relayed: Msg[] = [];
    helper.getNode('written').on('input', (m: Msg) => written.push(m));
    helper.getNode('caught').on('input', (m: Msg) => caught.push(m));
    helper.getNode('relayed').on('input', (m: Msg) => relayed.push(m));
    return { written, caught, relayed };
  }

  function order(id: string, amount: number): Msg {
    return { payload: { id, amount }, statements: [{ sql: `INSERT INTO ${orders} (id, amount) VALUES ($1, $2) RETURNING id`, params: [id, amount] }] };
  }

  async function consumeAll(count: number): Promise<Array<{ messageId: string; body: Msg }>> {
    const ch = await broker.ch();
    const got: Array<{ messageId: string; body: Msg }> = [];
    await waitFor(async () => {
      for (;;) {
        const m = await ch.get(queue, { noAck: true });
        if (!m) break;
        got.push({ messageId: String(m.properties.messageId), body: JSON.parse(m.content.toString()) as Msg });
      }
      return got.length >= count;
    }, `${count} events on ${queue}`);
    return got;
  }

  it('writes the row and its event in one transaction; the relay publishes it with its id as messageId and marks it sent', async () => {
    const { written } = await load();
    helper.getNode('write').receive(order('o-1', 12.5));
    await waitFor(() => written.length === 1, 'the write answered');
    const id = written[0]!.outbox.id as string;
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(written[0]!.outbox.results[0].rows, [{ id: 'o-1' }]);
    const [event] = await consumeAll(1);
    assert.deepEqual(event, { messageId: id, body: { id: 'o-1', amount: 12.5 } });
    await waitFor(async () => (await db.query(`SELECT status FROM ${outbox} WHERE id = $1`, [id])).rows[0]?.status === 'sent', 'the row marked sent');
  });

  it('with "delete a row once it is sent", a confirmed row is deleted in the transaction that confirmed it: its event published once, no sent row kept', async () => {
    const { written } = await load(1, { deleteSent: true });
    for (let i = 0; i < 30; i++) helper.getNode('write').receive(order(`d-${i}`, i + 1));
    await waitFor(() => written.length === 30, 'all written');
    const ids = written.map((m) => m.outbox.id as string);
    const events = await consumeAll(30);
    assert.deepEqual(new Set(events.map((e) => e.messageId)), new Set(ids));
    await waitFor(async () => Number((await db.query(`SELECT count(*) AS n FROM ${outbox} WHERE id = ANY($1::text[])`, [ids])).rows[0]?.n) === 0, 'the rows deleted');
  });

  it('carries the msg\'s trace context through the row to the event; with an OpenTelemetry SDK, as a relay span of that trace', async () => {
    const spans = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
    try {
      const { written } = await load();
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      helper.getNode('write').receive({ ...order('o-t', 3), traceparent, tracestate: 'shop=1' });
      await waitFor(() => written.length === 1, 'the write answered');
      const id = written[0]!.outbox.id as string;
      const row = (await db.query(`SELECT headers FROM ${outbox} WHERE id = $1`, [id])).rows[0] as { headers: Record<string, unknown> };
      assert.deepEqual(row.headers, { traceparent, tracestate: 'shop=1' }, 'in the row\'s headers');
      const ch = await broker.ch();
      let headers: Record<string, unknown> | undefined;
      await waitFor(async () => {
        const event = await ch.get(queue, { noAck: true });
        if (event !== false) headers = event.properties.headers ?? {};
        return headers !== undefined;
      }, 'the event published');
      assert.ok(headers);
      const relay = spans.getFinishedSpans().find((s) => s.name === `relay ${exchange}`);
      assert.ok(relay);
      assert.equal(relay.parentSpanContext?.spanId, '00f067aa0ba902b7', 'a child of the row\'s trace context');
      assert.equal(relay.attributes['messaging.message.id'], id);
      assert.equal(String(headers.traceparent), `00-4bf92f3577b34da6a3ce929d0e0e4736-${relay.spanContext().spanId}-01`);
      assert.equal(String(headers.tracestate), 'shop=1');
    } finally {
      trace.disable();
    }
  });

  it('a failing statement rolls back the row and the event, and is a Catch-able error naming the statement', async () => {
    const { written, caught } = await load(0);
    const msg = order('o-2', 5);
    msg.statements.push({ sql: `INSERT INTO ${orders} (id, amount) VALUES ($1, $2)`, params: ['o-3', -1] });
    helper.getNode('write').receive(msg);
    await waitFor(() => caught.length === 1, 'the error caught');
    assert.match(String(caught[0]!.error.message), /^(StatementError: )?statement 2 of 2 failed \(INSERT INTO test_orders_\w+ \(id, amount\) VALUES \(\$1, \$2\)\): .*check constraint.*; nothing was written$/);
    assert.equal(written.length, 0);
    assert.equal((await db.query(`SELECT count(*)::int AS n FROM ${orders}`)).rows[0]?.n, 0, 'the first statement was rolled back');
    assert.equal((await db.query(`SELECT count(*)::int AS n FROM ${outbox}`)).rows[0]?.n, 0, 'no event');
  });

  it('an unroutable event is retried with backoff, then failed (status, list); "retry" sends it once it can be routed', async () => {
    const { written, relayed } = await load(1, { maxAttempts: '2' }, { routingKey: 'nobody.listens' });
    helper.getNode('write').receive(order('o-4', 1));
    await waitFor(() => written.length === 1, 'written');
    const id = written[0]!.outbox.id as string;
    await waitFor(async () => (await db.query(`SELECT status FROM ${outbox} WHERE id = $1`, [id])).rows[0]?.status === 'failed', 'the row failed after 2 attempts');
    const row = (await db.query(`SELECT attempts, last_error FROM ${outbox} WHERE id = $1`, [id])).rows[0] as { attempts: number; last_error: string };
    assert.equal(row.attempts, 2);
    assert.match(row.last_error, /unroutable|returned|NO_ROUTE/i);
    await waitFor(() => /^1 failed · /.test(lastStatus('relay0')?.text ?? ''), 'the failed count first on the status');

    helper.getNode('relay0').receive({ topic: 'failed' });
    await waitFor(() => relayed.length === 1, 'the failed rows');
    assert.deepEqual(relayed[0]!.payload.map((r: Msg) => [r.id, r.routingKey, r.attempts]), [[id, 'nobody.listens', 2]]);

    await (await broker.ch()).bindQueue(queue, exchange, 'nobody.listens');
    helper.getNode('relay0').receive({ topic: 'retry', payload: id });
    await waitFor(() => relayed.length === 2, 'retried');
    assert.deepEqual(relayed[1]!.payload, { retried: 1 });
    const [event] = await consumeAll(1);
    assert.equal(event?.messageId, id);
    helper.getNode('relay0').receive({ topic: 'nonsense' });
    await waitFor(() => errorsOf('relay0').some((e) => /msg.topic must be 'failed' or 'retry'/.test(e)), 'a wrong topic is an error');
  });

  it('two relays on one table publish each row exactly once', async () => {
    const { written } = await load(2, { batchSize: '7' });
    for (let i = 0; i < 150; i++) helper.getNode('write').receive(order(`m-${i}`, i + 1));
    await waitFor(() => written.length === 150, 'all written');
    const events = await consumeAll(150);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const more = await (await broker.ch()).get(queue, { noAck: true });
    assert.equal(more, false, 'no row published twice');
    assert.equal(new Set(events.map((e) => e.messageId)).size, 150);
  });

  it('with "keep the order", rows of one order key are published in the order written', async () => {
    const { written } = await load(2, { ordered: true, batchSize: '50' });
    // One write after the other (as one customer's orders are): the order written is the order committed.
    for (let i = 0; i < 60; i++) {
      const msg = order(`k-${i}`, i + 1);
      msg.orderKey = `customer-${i % 3}`;
      helper.getNode('write').receive(msg);
      await waitFor(() => written.length === i + 1, `write ${i}`);
    }
    const events = await consumeAll(60);
    for (const key of [0, 1, 2]) {
      const amounts = events.filter((e) => (e.body.amount - 1) % 3 === key).map((e) => e.body.amount as number);
      assert.deepEqual(amounts, [...amounts].sort((a, b) => a - b), `customer-${key} in order`);
    }
  });

  it('check mode names a missing table instead of writing', async () => {
    const { caught } = await load(0, {}, { mode: 'check' });
    helper.getNode('write').receive(order('o-9', 1));
    await waitFor(() => caught.length === 1, 'the error');
    assert.match(String(caught[0]!.error.message), new RegExp(`outbox table: table "${outbox}" does not exist`));
  });

  it('a row for an exchange that does not exist backs off alone: the other rows of its batch are published once', async () => {
    await load(1, { maxAttempts: '3', batchSize: '20' });
    await waitFor(async () => (await db.query(`SELECT to_regclass($1) AS t`, [outbox])).rows[0]?.t !== null, 'the outbox table declared');
    // One transaction, so the relay claims them in one batch: the bad row first.
    await db.transaction(async (c) => {
      await c.query(`INSERT INTO ${outbox} (id, exchange, routing_key, payload) VALUES ('bad', $1, 'order.created', '\\x7b7d')`, [`no-such-exchange-${tag}`]);
      for (let i = 0; i < 5; i++) await c.query(`INSERT INTO ${outbox} (id, exchange, routing_key, payload) VALUES ($1, $2, 'order.created', $3)`, [`good-${i}`, exchange, Buffer.from(JSON.stringify({ i }))]);
      await c.query(`SELECT pg_notify($1, '')`, [`${outbox}_outbox`]);
    });
    const events = await consumeAll(5);
    await waitFor(async () => (await db.query(`SELECT status FROM ${outbox} WHERE id = 'bad'`)).rows[0]?.status === 'failed', 'the bad row failed after its attempts');
    const more = await (await broker.ch()).get(queue, { noAck: true });
    assert.equal(more, false, 'no good row published twice');
    assert.deepEqual(events.map((e) => e.messageId).sort(), ['good-0', 'good-1', 'good-2', 'good-3', 'good-4']);
    const row = (await db.query(`SELECT attempts, last_error FROM ${outbox} WHERE id = 'bad'`)).rows[0] as { attempts: number; last_error: string };
    assert.equal(row.attempts, 3);
    assert.match(row.last_error, /exchange 'no-such-exchange-\w+' does not exist/);
    const sent = (await db.query(`SELECT count(*)::int AS n, max(attempts) AS most FROM ${outbox} WHERE status = 'sent'`)).rows[0] as { n: number; most: number };
    assert.deepEqual(sent, { n: 5, most: 1 }, 'each good row published on its first attempt');
  });

  it('an unroutable row in a batch fails alone (returned): the other rows of its batch are confirmed and marked sent once', async () => {
    await load(1, { maxAttempts: '2', batchSize: '20' });
    await waitFor(async () => (await db.query(`SELECT to_regclass($1) AS t`, [outbox])).rows[0]?.t !== null, 'the outbox table declared');
    // One transaction, so the relay claims them in one batch, the unroutable row among the others.
    await db.transaction(async (c) => {
      for (let i = 0; i < 5; i++) {
        const key = i === 2 ? 'no.such.binding' : 'order.created';
        await c.query(`INSERT INTO ${outbox} (id, exchange, routing_key, payload) VALUES ($1, $2, $3, $4)`, [`row-${i}`, exchange, key, Buffer.from(JSON.stringify({ i }))]);
      }
      await c.query(`SELECT pg_notify($1, '')`, [`${outbox}_outbox`]);
    });
    const events = await consumeAll(4);
    await waitFor(async () => (await db.query(`SELECT status FROM ${outbox} WHERE id = 'row-2'`)).rows[0]?.status === 'failed', 'the unroutable row failed after its attempts');
    assert.equal(await (await broker.ch()).get(queue, { noAck: true }), false, 'no row published twice');
    assert.deepEqual(events.map((e) => e.messageId).sort(), ['row-0', 'row-1', 'row-3', 'row-4']);
    assert.deepEqual(events.map((e) => e.body.i as number).sort(), [0, 1, 3, 4], 'each with its own payload');
    const bad = (await db.query(`SELECT attempts, last_error FROM ${outbox} WHERE id = 'row-2'`)).rows[0] as { attempts: number; last_error: string };
    assert.equal(bad.attempts, 2);
    assert.match(bad.last_error, /returned unroutable/);
    const sent = (await db.query(`SELECT count(*)::int AS n, max(attempts) AS most FROM ${outbox} WHERE status = 'sent'`)).rows[0] as { n: number; most: number };
    assert.deepEqual(sent, { n: 4, most: 1 }, 'each routed row published and marked on its first attempt');
  });
});
