/**
 * The fault suite (`npm run test:faults`): the packed package in a real Node-RED process, a broker the
 * suite starts itself on its own ports (scripts/rabbitmq-node.sh) so it may hurt it, and one fault per
 * run while messages flow. It prints (and writes to faults-table.md) a table: fault, published,
 * processed, parked, duplicate deliveries, duplicate effects, LOST, left in queues, recovery seconds.
 * A message is processed when its effect row is in PostgreSQL or the flow recorded it; it is lost when
 * the broker confirmed it and it was neither processed, nor parked, nor is still in a queue: every row
 * must show 0, and every message must end processed or parked. Duplicate effects (an effect row beyond
 * the first per message) must be 0 in the rows with deduplication. Recovery is reported, not asserted.
 * The downstream rows assert besides: with the kill switch, no good message parked and every message
 * processed within the restart timeout in force + 10 s of the database answering again; permanent
 * errors parked after one delivery each. `npx mocha test/faults/faults.test.ts --grep downstream`
 * runs some rows alone (after `npm run build`).
 *
 * Needs `npm run build` first (the tarball packs dist/) and an installed rabbitmq-server.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NodeRedProcess, type NodeRedLaunch } from '../helpers/node-red-process';
import { CIRCUIT_MARK, faultFlow, faultNames, healthy, latestStatuses, markedLines, SEEN_MARK } from './fault-flow';
import { BATCH_FAULTS, DEDUPE_FAULTS, DOWNSTREAM_FAULTS, FAULTS, OUTBOX_FAULTS, type Fault, type FaultWindow } from './faults';
import { CLUSTER_FAULTS, processingAfter } from './cluster-faults';
import { outboxTableDdl } from '../../src/lib/outbox';
import { parseTableName } from '../../src/lib/postgres';
import { PostgresDatabase } from '../../src/lib/postgres';
import { DATABASE_URL, startPrivatePostgres, startPrivateRedis, type PrivateServer } from '../helpers/private-stores';
import { brokerNode, pause, resetBrokerNodes, waitUntil } from './fault-broker';
import { Accounting, drain, isPoison, poisonIds, Producer, withChannel } from './workload';
import { OutboxProducer } from './outbox-producer';
import { cleanUp, consumerErrors, duplicateEffects, packedNodeRed, takeStock } from './run-parts';
import type { GetMessage } from 'amqplib';
import { skipBecause } from '../helpers/skips';

/** Messages per second the producer starts; the run lasts about 20 s plus the fault. */
const RATE = 40;
/** Publishing goes on this long after the fault ended, so there is something to recover with. */
const AFTER_FAULT_MS = 5_000;
const TABLE_FILE = process.env.FAULTS_TABLE ?? path.resolve(__dirname, '../../faults-table.md');
/** Each run's Node-RED output, for a look after the fact. */
const LOG_DIR = path.join(os.tmpdir(), 'rabbitmq-retry-faults');
/** With the kill switch, every message is processed within the restart timeout in force + this of the database answering. */
const DRAIN_MARGIN_S = 10;

interface Row {
  fault: string;
  published: number;
  processed: number;
  parked: number;
  duplicates: number;
  /** Effects (rows in the effects table) beyond one per message: what a duplicate costs a user. */
  duplicateEffects: number;
  lost: number;
  left: number;
  /** Worst over the fault's repetitions; undefined: nothing was processed after it. */
  recovery: number | undefined;
  /** What the row measured beyond the columns, printed under the table. */
  note?: string;
}

/** One event of the consumer's kill switch (its events output, topic `circuit`), with Node-RED's time. */
interface CircuitEvent {
  state: 'closed' | 'open' | 'probing';
  previous: string;
  reason?: string;
  restartInS?: number;
  at: number;
}

function table(rows: Row[]): string {
  const head = '| fault | published | processed (distinct) | parked | duplicate deliveries | duplicate effects | LOST | left in queues | recovery (s) |';
  const lines = rows.map(
    (r) =>
      `| ${r.fault} | ${r.published} | ${r.processed} | ${r.parked} | ${r.duplicates} | ${r.duplicateEffects} | **${r.lost}** | ${r.left} | ${r.recovery === undefined ? 'none' : r.recovery.toFixed(1)} |`,
  );
  const notes = rows.filter((r) => r.note).map((r) => `- ${r.fault}: ${r.note}`);
  return [head, '|---|---:|---:|---:|---:|---:|---:|---:|---:|', ...lines, ...(notes.length > 0 ? ['', ...notes] : [])].join('\n');
}

describe('fault suite: the packed package in a real Node-RED against a broker that fails', function () {
  this.timeout(180_000);
  const rows: Row[] = [];
  const { launch, userDir } = packedNodeRed();

  after(async function () {
    if (rows.length > 0) {
      const text = table(rows);
      console.log(`\n${text}\n`);
      writeFileSync(TABLE_FILE, `${text}\n`);
    }
    await resetBrokerNodes();
  });

  for (const fault of [...FAULTS, ...CLUSTER_FAULTS, ...DEDUPE_FAULTS, ...OUTBOX_FAULTS, ...DOWNSTREAM_FAULTS, ...BATCH_FAULTS]) {
    it(fault.name, async function () {
      // Bringing a 3-node cluster up takes a minute or more on a busy machine.
      if (fault.broker === 'cluster') this.timeout(360_000);
      const why = fault.skip?.();
      if (why) skipBecause(this, why);
      const run = await runFault(fault, await launch, userDir());
      const { row, missing, statuses, consumerErrors, rolledBackSeen, log, accounting, confirmed } = run;
      rows.push(row);
      if (fault.flow?.events) downstreamOutage(fault, run);
      if (fault.flow?.permanent) permanentErrors(run);
      assert.deepEqual(rolledBackSeen, [], `events of rolled-back writes were published after ${fault.name}${log}`);
      if (fault.dedupe) assert.equal(row.duplicateEffects, 0, `${row.duplicateEffects} effect(s) repeated after ${fault.name} with deduplication on${log}`);
      assert.equal(row.lost, 0, `${row.lost} confirmed message(s) LOST after ${fault.name}: ${missing.lost.slice(0, 20).join(', ')}${log}`);
      if (fault.parksPoison) assert.deepEqual([...accounting.parked].sort(), poisonIds(confirmed).sort(), `parked: not exactly the poison messages after ${fault.name}${log}`);
      assert.equal(missing.stuck.length, 0, `${missing.stuck.length} message(s) neither processed nor parked after ${fault.name}, left in queues: ${missing.stuck.slice(0, 20).join(', ')}${log}`);
      assert.equal(statuses, undefined, `a status stuck after ${fault.name}: ${statuses ?? ''}${log}`);
      // An outage the consumer rides out is the broker node's warning, not an error of the consumer.
      assert.deepEqual(consumerErrors, [], `the consumer logged errors during ${fault.name}${log}`);
    });
  }
});

/**
 * The downstream outage rows. Without the kill switch: how many good messages were parked (the note).
 * With it: the switch opened and is closed at the end, no good message parked (the producer publishes
 * no poison), and the last message was processed within the restart timeout in force (that of the
 * switch's last opening: it doubles on each trip in a row) + DRAIN_MARGIN_S of the database answering.
 */
function downstreamOutage(fault: Fault, run: RunResult): void {
  const { row, windows, circuit, accounting, log } = run;
  const dbBack = windows[0]!.end;
  const lastAt = Math.max(...accounting.records.map((r) => r.at));
  const after = (lastAt - dbBack) / 1000;
  const opened = circuit.filter((e) => e.state === 'open');
  const restarts = opened.map((e) => e.restartInS);
  const closedAt = circuit.filter((e) => e.state === 'closed').at(-1)?.at;
  if (!fault.flow?.circuit) {
    row.note = `${row.parked} good messages parked (every one that met the outage spent its 5 attempts); last message processed ${after.toFixed(1)} s after the database answered`;
    assert.deepEqual(circuit, [], `kill switch events without the kill switch${log}`);
    return;
  }
  const restart = opened.at(-1)?.restartInS;
  row.note =
    `kill switch opened ${opened.length}× (restart ${restarts.join(' → ')} s), closed ${closedAt === undefined ? 'never' : `${((closedAt - dbBack) / 1000).toFixed(1)} s`} after the database answered; ` +
    `${row.parked} good messages parked; last message processed ${after.toFixed(1)} s after it (bound: restart ${restart ?? '?'} s + ${DRAIN_MARGIN_S} s)`;
  assert.ok(opened.length > 0 && restart !== undefined, `the kill switch never opened: ${JSON.stringify(circuit)}${log}`);
  assert.equal(circuit.at(-1)?.state, 'closed', `the kill switch did not close again: ${JSON.stringify(circuit)}${log}`);
  assert.equal(row.parked, 0, `${row.parked} good message(s) parked with the kill switch on${log}`);
  assert.ok(after <= restart + DRAIN_MARGIN_S, `the last message was processed ${after.toFixed(1)} s after the database answered, beyond restart ${restart} s + ${DRAIN_MARGIN_S} s: ${JSON.stringify(circuit)}${log}`);
}

/**
 * The permanent-error row: every poison message (HTTP 400, matched by the `permanent` rule) was
 * delivered once, at attempt 1, and parked from there (`park-error-kind: permanent`, `retry-attempt`
 * 1): none went through the retry queue. No good message parked.
 */
function permanentErrors(run: RunResult): void {
  const { row, seen, parkedMessages, confirmed, log } = run;
  const poison = poisonIds(confirmed);
  assert.ok(poison.length > 0, 'no poison message was published');
  const deliveries = new Map<string, number[]>();
  for (const s of seen) deliveries.set(s.id, [...(deliveries.get(s.id) ?? []), s.attempt]);
  const notOnce = poison.filter((id) => JSON.stringify(deliveries.get(id)) !== '[1]');
  assert.deepEqual(notOnce.map((id) => `${id}: ${JSON.stringify(deliveries.get(id) ?? [])}`), [], `poison messages not delivered exactly once, at attempt 1${log}`);
  const parked = new Map(parkedMessages.map((m) => [String(m.properties.messageId), (m.properties.headers ?? {}) as Record<string, unknown>]));
  const wrong = poison.filter((id) => parked.get(id)?.['park-error-kind'] !== 'permanent' || parked.get(id)?.['retry-attempt'] !== 1);
  assert.deepEqual(wrong.map((id) => `${id}: ${JSON.stringify(parked.get(id) ?? 'not parked')}`), [], `poison messages not parked as permanent at attempt 1${log}`);
  assert.equal(row.parked, poison.length, `good messages parked too${log}`);
  row.note = `${poison.length} poison messages, each delivered once and parked at attempt 1 as permanent; none retried`;
}

/** One run: fresh queue names, fresh Node-RED process, the workload, the fault, the accounting. */
interface RunResult {
  row: Row;
  missing: { lost: string[]; stuck: string[] };
  /** The nodes' latest statuses when they did not show a consuming, connected flow at the end. */
  statuses: string | undefined;
  /** `[error]` lines of the retry consumer, from every Node-RED process of the run. */
  consumerErrors: string[];
  /** Outbox rows: events of rolled-back writes that were processed or parked anyway (must be none). */
  rolledBackSeen: string[];
  log: string;
  windows: FaultWindow[];
  accounting: Accounting;
  /** Ids the broker confirmed. */
  confirmed: ReadonlySet<string>;
  /** Every parked copy taken off the parking queue, with its headers. */
  parkedMessages: GetMessage[];
  /** Deliveries of poison messages as the flow saw them. */
  seen: Array<{ id: string; attempt: number }>;
  /** The kill switch's events, in order. */
  circuit: CircuitEvent[];
}

async function runFault(fault: Fault, launch: NodeRedLaunch, userDir: string): Promise<RunResult> {
  const broker = await brokerNode(fault.broker);
  const names = faultNames(fault.id);
  // The store rows run a server of their own, which the fault stops and starts.
  let store: PrivateServer | undefined;
  let databaseUrl = DATABASE_URL;
  if (fault.store === 'postgres') {
    store = await startPrivatePostgres('faults');
    databaseUrl = store.url.replace('postgres@', 'postgres:faults@');
  } else if (fault.store === 'redis') {
    store = await startPrivateRedis();
  }
  const flow = faultFlow(names, { quorum: fault.broker === 'cluster', dedupe: fault.dedupe === true, redis: fault.store === 'redis' ? store?.url : undefined, outbox: fault.outbox === true, ...fault.flow });
  // On the cluster the records' queue is quorum too: a node lost with its disk must not take them along.
  await withChannel(broker.url, (ch) => ch.assertQueue(names.processedQueue, { durable: true, arguments: fault.broker === 'cluster' ? { 'x-queue-type': 'quorum' } : {} }));
  const db = new PostgresDatabase({ connectionString: databaseUrl });
  await db.query(`CREATE TABLE ${names.effectsTable} (message_id text NOT NULL, at timestamptz NOT NULL DEFAULT now())`);
  const outboxTable = parseTableName(names.outboxTable);
  if (fault.outbox && !('problem' in outboxTable)) for (const statement of outboxTableDdl(outboxTable)) await db.query(statement);
  const outputs: string[] = [];
  // No flow of an earlier run: it would declare that run's (deleted) queues again and be stopped mid-setup.
  writeFileSync(path.join(userDir, 'flows.json'), '[]');
  let red = await NodeRedProcess.start({ launch, userDir, env: { AMQP_URL: broker.nodeRedUrl, DATABASE_URL: databaseUrl } });
  const log = (): string => `\n--- Node-RED output ---\n${[...outputs, red.output].join('\n--- restarted ---\n').slice(-8000)}`;
  const accounting = new Accounting();
  let noted: string | undefined;
  try {
    await red.deploy(flow);
    await waitUntil(async () => (await withChannel(broker.url, (ch) => ch.checkQueue(names.mainQueue)).catch(() => undefined))?.consumerCount === 1, `a consumer on ${names.mainQueue}${log()}`);
    const producer = fault.outbox
      ? new OutboxProducer(db, names.outboxTable, names.exchange, names.routingKey, fault.id)
      : new Producer(broker.urls, names.exchange, names.routingKey, fault.id, fault.poison === false ? () => false : isPoison);
    producer.start(RATE);
    await waitUntil(async () => {
      accounting.addRecords(await drain(broker.url, names.processedQueue));
      return accounting.processed.size >= 40;
    }, `the flow to process its first messages${log()}`);

    const windows: FaultWindow[] = await fault.inject({
      broker,
      names,
      note: (text) => (noted = text),
      redeploy: () => red.deploy(flow),
      killNodeRed: async () => {
        outputs.push(red.output);
        await red.kill('SIGKILL');
      },
      store,
      startNodeRed: async () => {
        red = await NodeRedProcess.start({ launch, userDir, env: { AMQP_URL: broker.nodeRedUrl, DATABASE_URL: databaseUrl } });
      },
    });
    await pause(AFTER_FAULT_MS);
    const published = await producer.stop();

    // Everything the broker confirmed must end processed or parked; wait (generously) until it has.
    const parkedMessages: GetMessage[] = [];
    const settled = (): Promise<boolean> => takeStock(broker, names, db, accounting, producer.confirmed, parkedMessages);
    await waitUntil(settled, 'every message processed or parked', 90_000).catch(() => undefined);
    let statuses: string | undefined;
    await waitUntil(() => Promise.resolve(healthy(latestStatuses(red.lines()))), 'consuming and connected statuses', 30_000).catch(() => {
      statuses = JSON.stringify([...latestStatuses(red.lines()).values()]);
    });
    await red.stop(); // unsettled deliveries go back to their queue
    const left = [...(await drain(broker.url, names.mainQueue)), ...(await drain(broker.url, names.retryQueue))];
    const leftIds = new Set(left.map((m) => String(m.properties.messageId)));
    const stuck = accounting.missing(producer.confirmed);
    const lost = stuck.filter((id) => !leftIds.has(id));
    const recoveries = windows.map((w) => accounting.recovery(w, fault.newConsumer));
    const note = [noted, fault.broker === 'cluster' ? processingAfter(accounting, windows[0]!.start) : undefined].filter((n) => n !== undefined).join('; ');
    const row: Row = {
      fault: fault.name,
      published,
      processed: accounting.processedCount,
      parked: accounting.parked.size,
      duplicates: accounting.duplicates,
      duplicateEffects: await duplicateEffects(db, names),
      lost: lost.length,
      left: left.length,
      recovery: recoveries.some((r) => r === undefined) ? undefined : Math.max(...(recoveries as number[])),
      ...(note === '' ? {} : { note }),
    };
    const lines = [...outputs, red.output].join('\n').split('\n');
    const rolledBack = producer instanceof OutboxProducer ? [...producer.rolledBack] : [];
    const rolledBackSeen = rolledBack.filter((id) => accounting.processed.has(id) || accounting.effected.has(id) || accounting.parked.has(id));
    return {
      row,
      missing: { lost, stuck },
      statuses,
      consumerErrors: consumerErrors(lines, fault.store !== undefined),
      rolledBackSeen,
      log: log(),
      windows,
      accounting,
      confirmed: producer.confirmed,
      parkedMessages,
      seen: markedLines(lines, SEEN_MARK),
      circuit: markedLines(lines, CIRCUIT_MARK),
    };
  } finally {
    await red.stop();
    mkdirSync(LOG_DIR, { recursive: true });
    writeFileSync(path.join(LOG_DIR, `${fault.id}.log`), [...outputs, red.output].join('\n--- restarted ---\n'));
    await cleanUp(broker, names, db);
    await store?.remove();
  }
}
