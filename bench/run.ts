/**
 * `npm run bench`: this package inside a Node-RED runtime vs raw amqplib, pair by pair, back to back
 * on the same broker, in one process (the memory part runs its Node-RED side in a child process; the
 * peers section runs each contestant in a process of its own, see lib/peers.ts).
 *
 *   npm run bench                      full run (a few minutes on 2 cores)
 *   BENCH_SMOKE=1 npm run bench        tiny counts, one repetition (CI; < 60 s)
 *   npm run bench -- --smoke           the same
 *   npm run bench -- --only=consume,park   some sections (the names below)
 *   AMQP_URL=amqp://guest:guest@127.0.0.1:5674 RABBITMQ_MANAGEMENT_URL=http://127.0.0.1:15674 npm run bench -- --only=native-retry
 *                                      broker-native delayed retry vs the TTL retry path (RabbitMQ 4.3+ only)
 *   npm run bench -- --only=consume --consume=16k:100   some consume+ack cases (size:prefetch; also filters analysis sizes)
 *   BENCH_REPS=7 npm run bench         more repetitions (default 5; the median is reported)
 *   BENCH_DIST=/path/to/dist node --expose-gc --import tsx bench/run.ts   another build of the package (compare a change)
 *
 * The sections, in the order they run, each in bench/sections/<name>.ts: consume, degrade, analysis,
 * peers, retry, native-retry, park, publish, dedupe, outbox, batch, nodered, partitions, scale, parking,
 * history, memory. The rest of the bench: config.ts (options, PLAN: the message counts), types.ts
 * (results, and the `Bench` every section takes), setup.ts (connection, cleanup, environment.ts),
 * harness.ts (section, pair, variants), report.ts (the printed tables), summary.ts (the JSON line);
 * lib/ the scenarios themselves.
 *
 * Other tools: bench/tools/profile.ts (CPU profile of one case), bench/tools/micro.ts (the package's
 * per-message code without broker or Node-RED). See docs/benchmark.md.
 *
 * Progress goes to stderr; the table and, as the last line, one JSON object go to stdout.
 * Benchmarks are not tests: nothing here asserts a speed. A section that fails is reported and the
 * process exits 1 after printing what it has.
 */
import { errorText } from './lib/common';
import { log } from './config';
import { section } from './harness';
import { printReport } from './report';
import { setup } from './setup';
import { summaryJson } from './summary';
import { newResults, type Bench, type Results } from './types';
import { consume } from './sections/consume';
import { degrade } from './sections/degrade';
import { analysis } from './sections/analysis';
import { peers } from './sections/peers';
import { retry } from './sections/retry';
import { nativeRetry } from './sections/native-retry';
import { park } from './sections/park';
import { publish } from './sections/publish';
import { dedupe } from './sections/dedupe';
import { outbox } from './sections/outbox';
import { batch } from './sections/batch';
import { nodered } from './sections/nodered';
import { partitions } from './sections/partitions';
import { scale } from './sections/scale';
import { parking } from './sections/parking';
import { history } from './sections/history';
import { memory } from './sections/memory';

/** The sections in the order they run, by their `--only=` names. */
const SECTIONS: Array<[name: string, run: (b: Bench) => Promise<void>]> = [
  ['consume', consume],
  ['degrade', degrade],
  ['analysis', analysis],
  ['peers', peers],
  ['retry', retry],
  ['native-retry', nativeRetry],
  ['park', park],
  ['publish', publish],
  ['dedupe', dedupe],
  ['outbox', outbox],
  ['batch', batch],
  ['nodered', nodered],
  ['partitions', partitions],
  ['scale', scale],
  ['parking', parking],
  ['history', history],
  ['memory', memory],
];

async function main(results: Results): Promise<number> {
  const { bench, env, cleanup } = await setup(results);
  try {
    for (const [name, run] of SECTIONS) await section(results, name, () => run(bench));
  } finally {
    await cleanup();
    await bench.model.close().catch(() => undefined);
  }
  printReport(env, results);
  process.stdout.write(`${JSON.stringify(summaryJson(results))}\n`);
  return results.failures.length === 0 ? 0 : 1;
}

const results = newResults();
main(results).then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`bench failed: ${errorText(err)}`);
    process.stdout.write(`${JSON.stringify({ ...summaryJson(results), error: err instanceof Error ? err.message : String(err) })}\n`);
    process.exit(1);
  },
);
