/**
 * The relay's pure parts, case by case: the window of batches in flight (room, turn in claim order,
 * idle), what a batch's outcomes make of its rows, the claim statement; and the pipeline itself on a
 * fake database and publisher: the next batch claimed and published while the first one's confirms
 * are outstanding, and the batches' marks committed in the order they were claimed even when the
 * later one is confirmed first.
 */
import assert from 'node:assert/strict';
import { backoffMs, batchOutcome, claimOpening, claimSql, decodeClaimed, markSentSql, OUTBOX_INDEXES, outboxTableDdl, type Row } from '../../../src/lib/outbox';
import { parseTableName, type TableName } from '../../../src/lib/postgres';

function row(seq: number, attempts = 0): Row {
  return { seq: String(seq), id: `e-${seq}`, exchange: 'x', routing_key: 'k', payload: Buffer.from('{}'), headers: null, properties: null, attempts };
}

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
