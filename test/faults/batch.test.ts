/**
 * The fault suite's batch rows of bad input (issue 51): the packed package in a real Node-RED process,
 * the suite's own broker, the fault flow in batch mode (batch-flow.ts). 500 messages are published at
 * once and taken as one batch of 500 (batch wait 10 s):
 * - one poison item (an HTTP 400 the rule `4xx` makes permanent) named by the flow in `msg.errors`;
 * - the same poison item, the flow naming nothing: PostgreSQL refuses the whole INSERT (a NULL id), the
 *   retry node's bisect splits the batch until the item is alone;
 * - no poison, the flow's `msg.outcomes` naming an index out of range at attempt 1;
 * - no poison, the flow settling the first item on its own (its `msg.amqp` as a single msg) before the
 *   batch reaches the same ack.
 * Asserted: lost 0; in the poison rows the poison item parked alone, once, at attempt 1 as permanent,
 * the other 499 processed once (one record each, one effect row each) and acked (nothing left in the
 * queues once Node-RED stopped); in the bad-input row the ack's error names the index, nothing is
 * settled (the items stay in flight), no item parked or settled twice, the settle timeout retries the
 * items and they are processed again at attempt 2 and acked; in the last row the batch's ack warns that
 * item 0 was settled before, and every item is processed and acked once. `npx mocha test/faults/batch.test.ts` after `npm run build`.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { GetMessage } from 'amqplib';
import { NodeRedProcess, type NodeRedLaunch } from '../helpers/node-red-process';
import { DATABASE_URL } from '../helpers/private-stores';
import { PostgresDatabase } from '../../src/lib/postgres';
import { faultFlow, faultNames, markedLines, SEEN_MARK, type FaultFlowOptions } from './fault-flow';
import { STATEMENT_MARK } from './batch-flow';
import { brokerNode, resetBrokerNodes, waitUntil } from './fault-broker';
import { Accounting, drain, Producer, withChannel } from './workload';
import { cleanUp, consumerErrors, duplicateEffects, packedNodeRed, takeStock } from './run-parts';

/** Messages per row, published at once: one batch. */
const COUNT = 500;
/** The poison item's number. */
const POISON = 250;
const BATCH = { size: COUNT, wait: 10_000 };

interface BatchRow {
  id: string;
  name: string;
  flow: FaultFlowOptions;
  poison: boolean;
  /** Done once this holds (beside every message processed or parked). */
  until?: (accounting: Accounting) => boolean;
}

const ROWS: BatchRow[] = [
  { id: 'batch-errors', name: 'one poison item among 500 (HTTP 400, rule `4xx` → permanent), named in `msg.errors`', flow: { permanent: true, batch: BATCH }, poison: true },
  { id: 'batch-bisect', name: 'one poison item among 500 (a NOT NULL violation, rule → permanent) · bisect, nothing named', flow: { batch: { ...BATCH, bisect: true } }, poison: true },
  { id: 'batch-outcomes', name: 'an index out of range in `msg.outcomes` at attempt 1 (settle timeout 5 s)', flow: { settleTimeout: 5, batch: { ...BATCH, badOutcomes: true } }, poison: false, until: (a) => a.records.length >= 2 * COUNT },
  { id: 'batch-twice', name: 'the first item settled on its own, then its batch (a single-message settle given an item)', flow: { batch: { ...BATCH, settleFirst: true } }, poison: false },
];

interface Run {
  published: number;
  accounting: Accounting;
  parked: GetMessage[];
  left: number;
  lost: string[];
  duplicateEffects: number;
  effects: number;
  lines: string[];
  log: string;
  poisonId: string;
}

describe('fault suite: batch mode and bad input in a real Node-RED', function () {
  this.timeout(120_000);
  const table: string[] = [];
  const notes: string[] = [];
  const { launch, userDir } = packedNodeRed();

  after(async function () {
    if (table.length > 0) console.log(`\n| row | published | processed (distinct) | parked | duplicate deliveries | duplicate effects | LOST | left in queues |\n|---|---:|---:|---:|---:|---:|---:|---:|\n${[...table, '', ...notes].join('\n')}\n`);
    await resetBrokerNodes();
  });

  for (const row of ROWS) {
    it(row.name, async function () {
      const run = await runBatch(row, await launch, userDir());
      const { accounting, log } = run;
      table.push(`| ${row.name} | ${run.published} | ${accounting.processedCount} | ${accounting.parked.size} | ${accounting.duplicates} | ${run.duplicateEffects} | **${run.lost.length}** | ${run.left} |`);
      assert.equal(run.published, COUNT);
      assert.deepEqual(run.lost, [], `confirmed messages LOST${log}`);
      assert.equal(run.left, 0, `messages left in the queues (unacked when Node-RED stopped)${log}`);
      assert.deepEqual(consumerErrors(run.lines, false), [], `the consumer logged errors${log}`);
      notes.push(`- ${row.name}: ${note(run)}`);
      if (row.poison) poisonAlone(run);
      else if (row.flow.batch?.badOutcomes) badOutcomes(run);
      else settledTwice(run);
    });
  }
});

/** How many batch msgs the flow processed (bisect's halves included), how many held the poison item, the smallest size seen. */
function note(run: Run): string {
  const statements = markedLines<{ size: number; split: number; poison: boolean }>(run.lines, STATEMENT_MARK);
  const sizes = statements.map((s) => s.size);
  return `${statements.length} batch msgs processed (one INSERT each), ${statements.filter((s) => s.poison).length} holding the poison item; sizes ${Math.max(...sizes)} down to ${Math.min(...sizes)}, split at most ${Math.max(...statements.map((s) => s.split))}×`;
}

/** The poison item parked alone, once, at attempt 1 as permanent; each other item processed and its effect written once. */
function poisonAlone(run: Run): void {
  const { accounting, parked, log, poisonId } = run;
  assert.deepEqual([...accounting.parked], [poisonId], `only the poison item parked${log}`);
  assert.equal(parked.length, 1, `the poison item parked once${log}`);
  const headers = (parked[0]?.properties.headers ?? {}) as Record<string, unknown>;
  assert.equal(headers['retry-attempt'], 1, `parked at attempt 1: ${JSON.stringify(headers)}`);
  assert.equal(headers['park-error-kind'], 'permanent');
  const seen = markedLines<{ id: string; attempt: number }>(run.lines, SEEN_MARK);
  assert.deepEqual([...new Set(seen.map((s) => `${s.id}@${s.attempt}`))], [`${poisonId}@1`], `the poison item only ever seen at attempt 1${log}`);
  assert.equal(accounting.records.length, COUNT - 1, `each good item recorded once (acked once: nothing delivered again)${log}`);
  assert.equal(accounting.processed.size, COUNT - 1);
  assert.equal(run.effects, COUNT - 1, 'one effect row per good item');
}

/** The ack's error names the index, nothing was settled at attempt 1; the settle timeout retried every item and each was acked at attempt 2. */
function badOutcomes(run: Run): void {
  const { accounting, lines, log } = run;
  const errors = lines.filter((line) => line.includes('[error] [retry-settle:ack]'));
  assert.ok(errors.length > 0 && errors.every((line) => line.includes(`msg.outcomes[${COUNT}]: out of range`)), `the ack's error names the index: ${errors.join('\n')}${log}`);
  assert.equal(accounting.parked.size, 0, `nothing parked${log}`);
  // Each item: processed at attempt 1 (nothing settled), and again at attempt 2 after the settle timeout, then acked.
  const attempts = new Map<string, number[]>();
  for (const r of accounting.records as Array<{ id: string; attempt?: number }>) attempts.set(r.id, [...(attempts.get(r.id) ?? []), r.attempt ?? 0]);
  const other = [...attempts].filter(([, a]) => JSON.stringify(a) !== '[1,2]');
  assert.deepEqual(other.slice(0, 10), [], `each item processed at attempt 1 and 2, once each${log}`);
  assert.equal(attempts.size, COUNT, 'every item processed');
  const twice = lines.filter((line) => /already settled/i.test(line));
  assert.deepEqual(twice, [], `nothing settled twice${log}`);
}

/** The batch's ack warns that item 0 was settled before; nothing settled twice: every item processed and acked once, none parked. */
function settledTwice(run: Run): void {
  const { accounting, lines, log } = run;
  const warnings = lines.filter((line) => line.includes('[warn] [retry-settle:ack]'));
  assert.equal(warnings.length, 1, `one warning${log}`);
  assert.match(warnings[0] ?? '', /item 0 not settled/, `the warning names index 0${log}`);
  assert.equal(accounting.parked.size, 0, `nothing parked${log}`);
  assert.equal(accounting.records.length, COUNT, `each item processed once (acked once: nothing delivered again)${log}`);
  assert.equal(accounting.processed.size, COUNT);
  assert.equal(run.effects, COUNT);
}

async function runBatch(row: BatchRow, launch: NodeRedLaunch, userDir: string): Promise<Run> {
  const broker = await brokerNode('single');
  const names = faultNames(row.id);
  await withChannel(broker.url, (ch) => ch.assertQueue(names.processedQueue, { durable: true }));
  const db = new PostgresDatabase({ connectionString: DATABASE_URL });
  await db.query(`CREATE TABLE ${names.effectsTable} (message_id text NOT NULL, at timestamptz NOT NULL DEFAULT now())`);
  writeFileSync(path.join(userDir, 'flows.json'), '[]');
  const red = await NodeRedProcess.start({ launch, userDir, env: { AMQP_URL: broker.nodeRedUrl, DATABASE_URL } });
  const log = (): string => `\n--- Node-RED output ---\n${red.output.slice(-8000)}`;
  try {
    await red.deploy(faultFlow(names, row.flow));
    await waitUntil(async () => (await withChannel(broker.url, (ch) => ch.checkQueue(names.mainQueue)).catch(() => undefined))?.consumerCount === 1, `a consumer on ${names.mainQueue}${log()}`);
    const producer = new Producer(broker.urls, names.exchange, names.routingKey, row.id, (n) => row.poison && n === POISON);
    producer.start(1000, COUNT);
    await waitUntil(() => Promise.resolve(producer.started >= COUNT), 'every message started');
    const published = await producer.stop();
    const accounting = new Accounting();
    const parked: GetMessage[] = [];
    const over = async (): Promise<boolean> => (await takeStock(broker, names, db, accounting, producer.confirmed, parked)) && (row.until?.(accounting) ?? true);
    await waitUntil(over, 'every message processed or parked', 60_000).catch(() => undefined);
    await red.stop(); // unsettled deliveries go back to their queue
    const left = [...(await drain(broker.url, names.mainQueue)), ...(await drain(broker.url, names.retryQueue))];
    const leftIds = new Set(left.map((m) => String(m.properties.messageId)));
    const effects = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${names.effectsTable}`)).rows[0]?.n ?? 0;
    return {
      published,
      accounting,
      parked,
      left: left.length,
      lost: accounting.missing(producer.confirmed).filter((id) => !leftIds.has(id)),
      duplicateEffects: await duplicateEffects(db, names),
      effects,
      lines: red.output.split('\n'),
      log: log(),
      poisonId: `${row.id}-${POISON}`,
    };
  } finally {
    await red.stop();
    await cleanUp(broker, names, db);
  }
}

