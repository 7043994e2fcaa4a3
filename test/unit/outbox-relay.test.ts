/**
 * The relay's pure parts, case by case: the window of batches in flight (room, turn in claim order,
 * idle), what a batch's outcomes make of its rows, the claim statement; and the pipeline itself on a
 * fake database and publisher: the next batch claimed and published while the first one's confirms
 * are outstanding, and the batches' marks committed in the order they were claimed even when the
 * later one is confirmed first.
 */
import assert from 'node:assert/strict';
import { backoffMs, batchOutcome, BatchWindow, claimOpening, claimSql, decodeClaimed, markSentSql, OUTBOX_INDEXES, OutboxRelay, outboxTableDdl, RowPublisher, type Row } from '../../src/lib/outbox';
import { parseTableName, samePredicate, type TableName } from '../../src/lib/postgres';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function row(seq: number, attempts = 0): Row {
  return { seq: String(seq), id: `e-${seq}`, exchange: 'x', routing_key: 'k', payload: Buffer.from('{}'), headers: null, properties: null, attempts };
}

describe('outbox relay: the window of batches in flight', () => {
  it('has room until `limit` batches are open, and again when one closes', async () => {
    const window = new BatchWindow(2);
    const a = window.slot();
    window.slot();
    assert.equal(window.inFlight, 2);
    let room = false;
    void window.room().then(() => {
      room = true;
    });
    await tick();
    assert.equal(room, false, 'no room with 2 of 2 in flight');
    a.close();
    await tick();
    assert.equal(room, true);
    assert.equal(window.inFlight, 1);
  });

  it("gives a batch its turn only once every batch opened before it has closed, whatever order they close in", async () => {
    const window = new BatchWindow(3);
    const [a, b, c] = [window.slot(), window.slot(), window.slot()];
    const turns: string[] = [];
    void a.turn().then(() => turns.push('a'));
    void b.turn().then(() => turns.push('b'));
    void c.turn().then(() => turns.push('c'));
    await tick();
    assert.deepEqual(turns, ['a'], 'the first batch has its turn at once');
    b.close(); // the second one is done first (it claimed nothing, or failed): the others still wait for the first
    await tick();
    assert.deepEqual(turns, ['a']);
    a.close();
    await tick();
    assert.deepEqual(turns, ['a', 'b', 'c']);
  });

  it('is idle when every batch closed; closing twice counts once', async () => {
    const window = new BatchWindow(2);
    await window.idle();
    const a = window.slot();
    let idle = false;
    void window.idle().then(() => {
      idle = true;
    });
    a.close();
    a.close();
    await tick();
    assert.equal(idle, true);
    assert.equal(window.inFlight, 0);
  });

  it('refuses a window that is not a whole number ≥ 1', () => {
    assert.throws(() => new BatchWindow(0), /whole number ≥ 1, not 0/);
    assert.throws(() => new BatchWindow(1.5), /not 1.5/);
  });
});

describe('outbox relay: a batch\'s outcome', () => {
  it('sorts confirmed rows from failed ones, with the attempt, the backoff and whether it was the last', () => {
    const outcome = batchOutcome([row(1), row(2, 2), row(3, 9)], [undefined, 'returned', 'nack'], 10, { initialMs: 1000, maxMs: 5000 });
    assert.deepEqual(outcome.sent.map((r) => r.seq), ['1']);
    assert.deepEqual(
      outcome.failures.map((f) => [f.row.seq, f.error, f.final, f.delayMs]),
      [
        ['2', 'returned', false, 4000],
        ['3', 'nack', true, 5000],
      ],
    );
  });

  it('decodes the claimed payloads from base64 in place, as PostgreSQL encodes them (a line break every 76 characters); a Buffer is left as it is', () => {
    const body = Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256));
    // encode(payload, 'base64') breaks its lines every 76 characters.
    const pgBase64 = body.toString('base64').replace(/.{76}/g, '$&\n');
    const buffer = Buffer.from('{"a":1}');
    const claimed = [
      { ...row(1), payload: pgBase64 },
      { ...row(2), payload: '' },
      { ...row(3), payload: buffer },
    ];
    const rows = decodeClaimed(claimed);
    assert.equal(rows, claimed);
    assert.deepEqual(rows[0]!.payload, body);
    assert.deepEqual(rows[1]!.payload, Buffer.alloc(0));
    assert.equal(rows[2]!.payload, buffer);
  });

  it('doubles the backoff from the first pause up to the cap', () => {
    assert.deepEqual([1, 2, 3, 4, 10].map((n) => backoffMs(n, 1000, 5000)), [1000, 2000, 4000, 5000, 5000]);
  });

  it('claims with SKIP LOCKED; ordered, leaves a row while an earlier one of its key is pending (or locked by a batch in flight)', () => {
    assert.match(claimSql('"t"', false, 100), /FOR UPDATE SKIP LOCKED/);
    assert.doesNotMatch(claimSql('"t"', false, 100), /order_key/);
    assert.match(claimSql('"t"', true, 100), /NOT EXISTS \(SELECT 1 FROM "t" e WHERE e.order_key = o.order_key AND e.status = 'pending' AND e.seq < o.seq\)/);
  });

  it('claims the oldest due pending rows, at most the batch, in one statement that reads each row once', () => {
    const sql = claimSql('"t"', false, 100).replace(/\s+/g, ' ');
    assert.equal(sql, `SELECT seq, id, exchange, routing_key, encode(payload, 'base64') AS payload, headers, properties, attempts FROM "t" o WHERE status = 'pending' AND next_attempt_at <= now() ORDER BY seq LIMIT 100 FOR UPDATE SKIP LOCKED`);
  });

  it('refuses a batch size that is not a whole number ≥ 1 (it is inlined in the statement)', () => {
    assert.throws(() => claimSql('"t"', false, 0), /not 0/);
    assert.throws(() => claimSql('"t"', false, 1.5), /not 1.5/);
    assert.throws(() => claimSql('"t"', false, Number.NaN), /not NaN/);
  });

  it('claims in the BEGIN\'s round trip, sorting off for the transaction (the claim walks the pending rows\' index on seq)', () => {
    assert.equal(claimOpening('"t"', false, 7), `BEGIN; SET LOCAL enable_sort = off; ${claimSql('"t"', false, 7)}`);
  });

  it('marks the confirmed rows sent in the COMMIT\'s round trip, their seqs inlined once checked; nothing to mark: no statement', () => {
    assert.equal(markSentSql('"t"', [row(3), row(12)]), `UPDATE "t" SET status = 'sent', sent_at = now(), attempts = attempts + 1, last_error = NULL WHERE seq = ANY('{3,12}'::bigint[])`);
    assert.equal(markSentSql('"t"', []), undefined);
    assert.equal(markSentSql('"t"', [row(3), row(12)], false), `DELETE FROM "t" WHERE seq = ANY('{3,12}'::bigint[])`, 'sent rows not kept: deleted');
    assert.equal(markSentSql('"t"', [], false), undefined);
    assert.throws(() => markSentSql('"t"', [{ ...row(1), seq: "1}'); DROP TABLE t; --" }]), /is not a whole number/);
  });

  it('declares, and expects, the index the claim walks: (seq) for pending rows only', () => {
    const table = parseTableName('outbox') as TableName;
    assert.ok(outboxTableDdl(table).includes(`CREATE INDEX IF NOT EXISTS "outbox_claim" ON "outbox" (seq) WHERE status = 'pending'`));
    assert.deepEqual(
      OUTBOX_INDEXES.filter((i) => i.where !== undefined).map((i) => [i.columns, i.where]),
      [[['seq'], "status = 'pending'"]],
    );
  });
});

describe('table check: a partial index\'s predicate', () => {
  it('is the one written whatever the parentheses, casts to text and spaces PostgreSQL prints', () => {
    assert.equal(samePredicate("(status = 'pending'::text)", "status = 'pending'"), true);
    assert.equal(samePredicate("status='pending'", "status = 'pending'"), true);
  });

  it('is not another predicate, nor none (a full index on the same columns)', () => {
    assert.equal(samePredicate("(status = 'sent'::text)", "status = 'pending'"), false);
    assert.equal(samePredicate(null, "status = 'pending'"), false);
  });
});

describe('outbox relay: publishing a batch', () => {
  it('gives each row its outcome: confirmed, refused with the reason, or no confirm within the timeout (one for the batch)', async () => {
    const answers: Record<string, () => Promise<void>> = {
      'e-1': () => Promise.resolve(),
      'e-2': () => Promise.reject(new Error('message was returned unroutable')),
      'e-3': () => new Promise<void>(() => undefined),
      'e-4': () => {
        throw new Error('cannot encode');
      },
    };
    const publisher = { publish: (_x: string, _k: string, _c: Buffer, options: Record<string, unknown>) => answers[String(options.messageId)]!() };
    const outcomes = await new RowPublisher(publisher, 10, undefined).publishAll([row(1), row(2), row(3), row(4)]);
    assert.deepEqual(outcomes, [undefined, 'message was returned unroutable', 'no confirm within 0.01 s', 'cannot encode']);
  });
  it('ends the span of each row once with its outcome, a confirm after the timeout changing nothing', async () => {
    let late: (() => void) | undefined;
    const answers: Record<string, () => Promise<void>> = {
      'e-1': () => Promise.resolve(),
      'e-2': () => Promise.reject(new Error('nacked')),
      'e-3': () =>
        new Promise<void>((resolve) => {
          late = resolve;
        }),
    };
    const ended: string[] = [];
    const tracer = {
      start: (_name: string, _kind: string, attributes: Record<string, unknown>) => {
        const id = String(attributes['messaging.message.id']);
        let failure = '';
        return {
          trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
          set: () => undefined,
          fail: (error: unknown) => {
            failure = ` failed: ${String(error)}`;
          },
          end: () => ended.push(`${id}${failure}`),
        };
      },
    };
    const publisher = { publish: (_x: string, _k: string, _c: Buffer, options: Record<string, unknown>) => answers[String(options.messageId)]!() };
    const outcomes = await new RowPublisher(publisher, 10, tracer).publishAll([row(1), row(2), row(3)]);
    late?.();
    await tick();
    assert.deepEqual(outcomes, [undefined, 'nacked', 'no confirm within 0.01 s']);
    assert.deepEqual(ended, ['e-1', 'e-2 failed: nacked', 'e-3 failed: no confirm within 0.01 s']);
  });

  it('resolves at once for an empty batch', async () => {
    assert.deepEqual(await new RowPublisher({ publish: () => Promise.resolve() }, 10, undefined).publishAll([]), []);
  });
});

describe('outbox relay: the pipeline (fake database and publisher)', () => {
  interface Confirm {
    id: string;
    resolve: () => void;
  }

  /**
   * A table of `count` pending rows; a claim takes the next ones not claimed; a transaction's marks
   * are logged when it commits (`sent 1,2`): what another connection sees, in the order it sees it.
   */
  function fakes(count: number): { relay: OutboxRelay; log: string[]; confirms: Confirm[] } {
    const log: string[] = [];
    const confirms: Confirm[] = [];
    let next = 1;
    const connection = () => ({
      query: async (sql: string): Promise<any> => {
        await tick();
        const claim = /SELECT seq.* LIMIT (\d+)/s.exec(sql);
        if (claim) {
          const limit = Number(claim[1]);
          const rows = [];
          while (rows.length < limit && next <= count) rows.push(row(next++));
          log.push(`claim ${rows.map((r) => r.seq).join(',')}`);
          return { rows, rowCount: rows.length };
        }
        return { rows: [], rowCount: 0 };
      },
    });
    const db = {
      query: connection().query,
      transaction: async <T>(work: (c: ReturnType<typeof connection>, opened: { rows: Row[] }) => Promise<T>, options: { begin?: string; end?: (result: T) => string | undefined } = {}): Promise<T> => {
        const c = connection();
        const opened = (await c.query(options.begin ?? 'BEGIN')) as { rows: Row[] };
        const result = await work(c, opened);
        const ending = options.end?.(result);
        await tick();
        const marked = ending === undefined ? null : /ANY\('\{([\d,]*)\}'/.exec(ending);
        if (marked) log.push(`sent ${marked[1]}`);
        return result;
      },
    };
    const table = parseTableName('outbox') as TableName;
    const publisher = {
      publish: (_exchange: string, _key: string, _content: Buffer, options: Record<string, unknown>): Promise<void> =>
        new Promise<void>((resolve) => {
          confirms.push({ id: String(options.messageId), resolve });
          log.push(`publish ${String(options.messageId)}`);
        }),
    };
    const relay = new OutboxRelay({ db: db as never, table, publisher, batchSize: 2, inFlight: 2, pollMs: 60_000, retentionMs: 0 });
    return { relay, log, confirms };
  }

  it('claims and publishes the next batch while the first one waits for its confirms, no more than the window', async () => {
    const { relay, log, confirms } = fakes(6);
    relay.start();
    for (let i = 0; i < 20; i++) await tick();
    assert.deepEqual(log, ['claim 1,2', 'publish e-1', 'publish e-2', 'claim 3,4', 'publish e-3', 'publish e-4'], 'two batches in flight, none confirmed, the third not claimed');
    for (const c of confirms.splice(0)) c.resolve();
    for (let i = 0; i < 20; i++) await tick();
    for (const c of confirms.splice(0)) c.resolve();
    await relay.stop();
    assert.deepEqual(log.filter((l) => l.startsWith('sent')), ['sent 1,2', 'sent 3,4', 'sent 5,6']);
    assert.equal(relay.stats.sent, 6);
  });

  it("commits the batches' marks in the order they were claimed when the later one is confirmed first", async () => {
    const { relay, log, confirms } = fakes(4);
    const sent: number[] = [];
    relay.on('sent', (n) => sent.push(n));
    relay.start();
    for (let i = 0; i < 20; i++) await tick();
    assert.equal(confirms.length, 4);
    for (const c of confirms.slice(2)) c.resolve(); // the second batch's confirms
    for (let i = 0; i < 20; i++) await tick();
    assert.deepEqual(log.filter((l) => l.startsWith('sent')), [], 'the second batch commits only after the first');
    for (const c of confirms.slice(0, 2)) c.resolve();
    await relay.stop();
    assert.deepEqual(log.filter((l) => l.startsWith('sent')), ['sent 1,2', 'sent 3,4']);
    assert.deepEqual(sent, [2, 2]);
  });
});
