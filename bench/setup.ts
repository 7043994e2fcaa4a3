/**
 * What main does before the first section: the package loaded from dist/, the broker connection,
 * the cleanup (also on a signal or a crash), the environment, and the shared `Bench` the sections
 * work with.
 */
import type { Options } from 'amqplib';
import type { Names } from '../test/helpers/flows';
import { AMQP_URL, NameBook, connect, errorText, initBrokerCpu, installProbe, makeBody, preload, purge, sleep, waitForCount } from './lib/common';
import { packageNodes } from './lib/nodered';
import { stopPeerProcesses } from './lib/peers';
import * as S from './lib/scenarios';
import { SMOKE, log } from './config';
import { environment, type Environment } from './environment';
import type { Bench, Prepare, Results } from './types';

export interface Setup {
  bench: Bench;
  env: Environment;
  /** Stops peer processes and deletes the run's queues; once, however often it is called. */
  cleanup: () => Promise<void>;
}

/** The cleanup, also run on SIGINT / SIGTERM and on a crash inside a node that would skip main's finally. */
function cleanupOnExit(names: NameBook): () => Promise<void> {
  // Once; a second caller (main's finally while a signal's cleanup runs) waits for the same one.
  let cleaning: Promise<void> | undefined;
  const cleanup = (): Promise<void> =>
    (cleaning ??= (async () => {
      await stopPeerProcesses();
      const deleted = await names.cleanup();
      log(`== cleanup: deleted ${deleted.length} queue(s) named ${names.prefix}.*`);
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`== ${signal}: cleaning up`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  // A crash inside a node (a throw in a timer) would skip the finally: clean up anyway.
  for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
    process.once(event, (err: unknown) => {
      log(`== ${event}: ${errorText(err)}; cleaning up`);
      void cleanup().finally(() => process.exit(1));
    });
  }
  return cleanup;
}

export async function setup(results: Results): Promise<Setup> {
  // Everything from dist/ is required now, right after the build: a concurrent rebuild cannot break the run.
  packageNodes();
  S.consumerSessionClass();
  const names = new NameBook('bench');
  const model = await connect('bench admin');
  const ctx: S.Ctx = { url: AMQP_URL, model, body1k: makeBody(1024) };
  const cleanup = cleanupOnExit(names);

  const env = environment((model.connection as unknown as { serverProperties?: Record<string, unknown> }).serverProperties, await initBrokerCpu());
  log(`machine: ${env.machine}\nbroker: ${env.broker}\n${env.versions}\nqueues: ${names.prefix}.*${SMOKE ? '\nSMOKE mode' : ''}`);
  const admin = await model.createChannel();
  admin.on('error', () => undefined);
  installProbe(admin);

  const consumeTopo = names.topology('consume');
  const bodies = new Map([1024, 16384].map((size) => [size, Buffer.from(JSON.stringify(makeBody(size)))]));
  const body = (size: number): Buffer => bodies.get(size) ?? Buffer.from(JSON.stringify(makeBody(size)));
  const loadQueue = (queue: string, size: number, count: number, props?: (i: number) => Options.Publish) => async (): Promise<void> => {
    await purge(model, queue);
    await preload(model, queue, count, body(size), props);
    await waitForCount(model, queue, count);
    await sleep(SMOKE ? 0 : 200); // let the broker finish with the preload before timing
  };
  const load = (topo: Names, size: number, count: number): Prepare => loadQueue(topo.mainQueue, size, count);
  return { bench: { ctx, model, admin, names, results, consumeTopo, body, loadQueue, load }, env, cleanup };
}
