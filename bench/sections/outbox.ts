/**
 * The outbox: the relay against a hand-written relay and against raw amqplib publishing the same
 * events, the write node against the same transaction by hand, and commit → queue latency.
 */
import * as P from '../lib/outbox-pipeline';
import { purge } from '../lib/common';
import { rawPipelinedRelay } from '../lib/relay-raw';
import * as D from '../lib/store-scenarios';
import * as W from '../lib/outbox-write-scenarios';
import { PLAN, log } from '../config';
import { pair } from '../harness';
import type { Bench } from '../types';

/** The tables and queue one outbox section run works on. */
interface Outbox {
  table: string;
  business: string;
  queue: string;
  event: Buffer;
}

async function relayPairs(b: Bench, { table, queue, event }: Outbox): Promise<void> {
  const { ctx, model } = b;
  const count = PLAN.outboxRelay;
  const prep = async (): Promise<void> => {
    await purge(model, queue);
    await D.prepareOutbox(table);
  };
  await pair(
    b.results,
    'outbox relay',
    `1 KB, ${count} rows, batch 100`,
    count,
    prep,
    () => D.rawRelay({ model, table, queue, count, body: event }),
    () => D.pkgRelay(ctx, { table, queue, count, body: event }),
  );
  // The same relay from the NOTIFY on (the rows written before the clock starts) against raw amqplib publishing the same events with confirms.
  await pair(
    b.results,
    'relay vs publish',
    '1 KB, confirms per 100',
    count,
    prep,
    () => P.rawPublishEvents({ model, queue, count, body: event, batch: 100 }),
    () => P.pkgRelayFromNotify(ctx, { table, queue, count, body: event }),
    undefined,
    // A careful hand-written pipelined relay on the same table.
    () => rawPipelinedRelay({ model, table, queue, count, body: event }),
  );
  // The same with deleteSent: a confirmed row deleted instead of marked sent.
  await pair(
    b.results,
    'relay vs publish, deleting sent rows',
    '1 KB, confirms per 100',
    count,
    prep,
    () => P.rawPublishEvents({ model, queue, count, body: event, batch: 100 }),
    () => P.pkgRelayFromNotify(ctx, { table, queue, count, body: event, deleteSent: true }),
  );
}

async function writePair(b: Bench, { table, business }: Outbox): Promise<void> {
  const writes = PLAN.outboxWrite;
  const payload = JSON.parse(b.body(1024).toString()) as unknown;
  await pair(
    b.results,
    'outbox write',
    `1 INSERT + event, 10 in flight`,
    writes,
    () => W.prepareWrite(table, business),
    () => W.rawWrite({ table, business, count: writes, window: 10, payload }),
    () => W.pkgWrite({ table, business, count: writes, window: 10, payload }),
  );
}

async function latencies(b: Bench, { table, business, queue, event }: Outbox): Promise<void> {
  const { ctx, model } = b;
  const { extra } = b.results;
  await W.prepareWrite(table, business);
  await D.dropTable(table);
  extra.outboxLatency = await W.outboxLatency(ctx, { model, table, business, queue: `${queue}.latency`, count: PLAN.outboxLatency });
  log(`   outbox latency (write answered → event at a consumer, NOTIFY): p50 ${extra.outboxLatency.p50.toFixed(1)} ms, p99 ${extra.outboxLatency.p99.toFixed(1)} ms`);
  await D.prepareOutbox(table);
  const { writers, rate, seconds } = PLAN.outboxRate;
  const atRate = await P.outboxLatencyAtRate(ctx, { model, table, queue: `${queue}.rate`, writers, rate, seconds, body: event });
  extra.outboxLatencyAtRate = atRate;
  log(`   outbox latency at ${rate}/s from ${writers} writers (COMMIT → event at a consumer; ${atRate.count} events, ${Math.round(atRate.writtenPerSec)}/s written): p50 ${atRate.p50.toFixed(1)} ms, p99 ${atRate.p99.toFixed(1)} ms`);
}

export async function outbox(b: Bench): Promise<void> {
  const why = await D.storesAnswer();
  if (why) throw new Error(`skipped: ${why}`);
  const queue = `${b.names.prefix}.outbox-events`;
  const table = `bench_outbox_${Math.random().toString(36).slice(2, 8)}`;
  const business = `${table}_orders`;
  const adminCh = await b.model.createChannel();
  await adminCh.assertQueue(queue, { durable: false });
  try {
    const o: Outbox = { table, business, queue, event: b.body(1024) };
    await relayPairs(b, o);
    await writePair(b, o);
    await latencies(b, o);
  } finally {
    await D.dropTable(table).catch(() => undefined);
    await D.dropTable(business).catch(() => undefined);
    await adminCh.deleteQueue(queue).catch(() => undefined);
    await adminCh.close().catch(() => undefined);
  }
}
