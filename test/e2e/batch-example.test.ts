/**
 * End to end: examples/batch-to-postgres.json (issue 51), installed from `npm pack` output into a
 * fresh Node-RED user directory and deployed through the admin HTTP API of a real Node-RED process,
 * against the real broker and PostgreSQL. Each of its two publish buttons sends 1000 rows, one of
 * them breaking the table's CHECK: with per-item outcomes (a) and with bisect (b) the bad row ends
 * parked alone, at attempt 1, and the 999 others are in the table, each once.
 *
 * On each Node-RED version of node-red-runtimes.ts (4.1 on the current Node.js, 5.0 on Node.js 22).
 * Needs `npm run build` first (the tarball packs dist/).
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PostgresDatabase } from '../../src/lib/postgres';
import { BATCH_NAMES, batchNames, dropBatchTables, packedNodeRed, renamedBatchExample, trackBatchExample, type FlowNode } from '../helpers/batch-example';
import { Broker, waitFor } from '../helpers/broker';
import { PACKAGE, type NodeRedProcess } from '../helpers/node-red-process';
import { DATABASE_URL } from '../helpers/private-stores';
import { NODE_RED_RUNTIMES, type NodeRedRuntime } from './node-red-runtimes';

/** One line per statement the bisect pattern's database refused, with its number of rows. */
const REFUSED_MARK = 'e2e-refused ';

describe('the batch-to-postgres example in a real Node-RED, installed from npm pack', function () {
  this.timeout(240_000);
  for (const runtime of NODE_RED_RUNTIMES) describe(runtime.title, () => batchExampleOn(runtime));
});

/** The example on one Node-RED version: its own names, user directory and process. */
function batchExampleOn(runtime: NodeRedRuntime): void {
  const names = batchNames('e2e');
  const tempDirs: string[] = [];
  let red: NodeRedProcess | undefined;
  let broker: Broker;
  let db: PostgresDatabase;
  let flow: FlowNode[] = [];

  const log = (): string => red?.log() ?? '';
  const count = async (queue: string): Promise<number> => ((await broker.exists('queue', queue)) ? broker.messageCount(queue) : -1);
  const byName = (type: string, name: string): FlowNode => {
    const found = flow.find((n) => n.type === type && n.name === name);
    assert.ok(found, `the example has no ${type} node named "${name}"`);
    return found;
  };

  before(async function () {
    // Node-RED 5's first run installs its toolchain (cached afterwards).
    this.timeout(runtime.prepareTimeoutMs + 120_000);
    broker = await Broker.open();
    trackBatchExample(broker, names);
    db = new PostgresDatabase({ connectionString: DATABASE_URL });
    let userDir: string;
    ({ red, userDir } = await packedNodeRed(tempDirs, runtime));
    // The example as shipped in the tarball, with this run's own names.
    const text = readFileSync(path.join(userDir, 'node_modules', PACKAGE, 'examples', 'batch-to-postgres.json'), 'utf8');
    for (const n of BATCH_NAMES) assert.ok(text.includes(n), `the example no longer mentions ${n}`);
    flow = renamedBatchExample(text, names);
  });

  after(async function () {
    await red?.stop();
    await dropBatchTables(db, names);
    await db?.close();
    await broker?.cleanup();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('is listed under Import ▸ Examples and has its consumers in batch mode, batches of 500', async function () {
    const listed = JSON.stringify(await red!.getJson(`/library/examples/flows/${PACKAGE}`));
    assert.ok(listed.includes('batch-to-postgres'), `Import ▸ Examples lists ${listed}`);
    const consumers = flow.filter((n) => n.type === 'retry-consumer');
    assert.equal(consumers.length, 2);
    for (const c of consumers) assert.deepEqual([c.batch, c.batchSize], [true, '500'], c.name);
    assert.equal(byName('retry-settle', 'retry, bisect').bisect, true);
  });

  it('parks the bad row alone at attempt 1 and inserts the 999 others once, by per-item outcomes (a) and by bisect (b)', async function () {
    // Each statement the bisect pattern's database refuses, with its number of rows, in Node-RED's log.
    const write = byName('outbox-write', 'INSERT the batch');
    const caught = flow.find((n) => n.type === 'catch' && Array.isArray(n.scope) && n.scope.includes(write.id));
    assert.ok(caught, 'no Catch node for the bisect pattern\'s INSERT');
    const mark = { id: 'e2e0000000000001', type: 'debug', z: caught.z, name: 'refused', active: true, tosidebar: false, console: true, tostatus: false, complete: `"${REFUSED_MARK}" & $string($count(payload))`, targetType: 'jsonata', x: 0, y: 0, wires: [] };
    (caught.wires as string[][])[0]!.push(mark.id);
    await red!.deploy([...flow, mark]);
    for (const q of [names['rows-checked-queue'], names['rows-bisect-queue']]) await waitFor(async () => (await broker.consumerCount(q)) === 1, `a consumer on ${q}${log()}`, 60_000);
    // The table is created on deploy (an inject after 0.5 s).
    await waitFor(async () => (await db.query(`SELECT to_regclass('${names.demo_rows}') AS t`)).rows[0]?.t !== null, `the table ${names.demo_rows}${log()}`, 30_000);

    for (const name of ['publish 1000 rows (a) checked', 'publish 1000 rows (b) bisect']) {
      const response = await red!.api('POST', `/inject/${byName('inject', name).id}`);
      assert.equal(response.status, 200, `inject ${name}: ${response.status}`);
    }
    const rowsPerPattern = async (): Promise<Record<string, number>> => {
      const rows = (await db.query<{ via: string; n: number }>(`SELECT via, count(*)::int AS n FROM ${names.demo_rows} GROUP BY via`)).rows;
      return Object.fromEntries(rows.map((r) => [r.via, r.n]));
    };
    const queues = [names['rows-checked-queue'], names['rows-bisect-queue']];
    const state = async (): Promise<string> =>
      `rows ${JSON.stringify(await rowsPerPattern())}; ${(await Promise.all(queues.flatMap((q) => [q, `${q}.retry`, `${q}.parking`].map(async (x) => `${x} ${await count(x)}`)))).join(', ')}${log()}`;
    try {
      await waitFor(
        async () => {
          const rows = await rowsPerPattern();
          if (rows.checked !== 999 || rows.bisect !== 999) return false;
          for (const q of queues) if ((await count(q)) !== 0 || (await count(`${q}.retry`)) !== 0 || (await count(`${q}.parking`)) !== 1) return false;
          return true;
        },
        '999 rows per pattern in the table, one parked per pattern, nothing left in the main and retry queues',
        120_000,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}: ${await state()}`, { cause: err });
    }

    for (const [queue, via, reason] of [
      [names['rows-checked-queue'], 'checked', /^row \d+: value -1 is not a number >= 0$/],
      [names['rows-bisect-queue'], 'bisect', /^permanent \(check\): /],
    ] as const) {
      const parked = await broker.drain(`${queue}.parking`);
      assert.equal(parked.length, 1, `${queue}.parking`);
      const message = parked[0]!;
      assert.equal((JSON.parse(message.content.toString('utf8')) as { value: number }).value, -1, 'the parked row is the bad one');
      const headers = message.properties.headers ?? {};
      assert.equal(headers['retry-attempt'], 1, `${via}: parked at attempt 1`);
      assert.match(String(headers['park-reason']), reason);
      // The bad row is the one row of its 1000 not in the table; each good row is there once (its id is the primary key).
      const id = String(message.properties.messageId);
      assert.match(id, new RegExp(`^rows\\.${via}-`));
      assert.equal((await db.query(`SELECT 1 FROM ${names.demo_rows} WHERE id = $1`, [id])).rowCount, 0);
    }

    // Bisect's cost: the statements PostgreSQL refused (a debug node the test adds to the Catch of the
    // bisect pattern logs each one's rows) — the whole batch (at most 500 rows) and one half per split
    // until the bad row was alone: at most 1 + ceil(log2(500)) = 10, the last of one row.
    const refused = red!.lines().filter((line) => line.includes(REFUSED_MARK)).map((line) => Number(line.slice(line.indexOf(REFUSED_MARK) + REFUSED_MARK.length)));
    assert.ok(refused.length >= 1 && refused.length <= 10, `${refused.length} refused statements: ${refused.join(', ')}${log()}`);
    assert.ok(refused.includes(1), `the bad row alone was refused: ${refused.join(', ')}`);
    assert.ok(refused.every((rows) => rows <= 500), refused.join(', '));
    const errors = red!.lines().filter((line) => line.includes('[error]'));
    assert.deepEqual(errors, [], `Node-RED logged errors${log()}`);
  });
}
