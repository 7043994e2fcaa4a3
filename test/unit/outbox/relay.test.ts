/**
 * The relay's pure parts, case by case: the window of batches in flight (room, turn in claim order,
 * idle), what a batch's outcomes make of its rows, the claim statement; and the pipeline itself on a
 * fake database and publisher: the next batch claimed and published while the first one's confirms
 * are outstanding, and the batches' marks committed in the order they were claimed even when the
 * later one is confirmed first.
 */
import assert from 'node:assert/strict';
import { OutboxRelay, type Row } from '../../../src/lib/outbox';
import { parseTableName, type TableName } from '../../../src/lib/postgres';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function row(seq: number, attempts = 0): Row {
  return { seq: String(seq), id: `e-${seq}`, exchange: 'x', routing_key: 'k', payload: Buffer.from('{}'), headers: null, properties: null, attempts };
}

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
