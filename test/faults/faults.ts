/**
 * The faults, each injected into its own run while messages flow. Each returns when it is over, with
 * one window per repetition: `start` (fault begins) and `end` (broker accepting connections again, the
 * deploy answered, Node-RED answering again, the alarm cleared), from which recovery is measured.
 */
import { acceptingConnections, pause, type BrokerKind, type BrokerNode } from './fault-broker';
import type { FaultFlowOptions, FaultNames } from './fault-flow';

export interface FaultWindow {
  start: number;
  end: number;
}

export interface FaultContext {
  broker: BrokerNode;
  /** A full deploy of the same flow through the admin API. */
  redeploy: () => Promise<void>;
  killNodeRed: () => Promise<void>;
  /** Starts Node-RED again on the same user directory (its flows.json) and waits for its admin API. */
  startNodeRed: () => Promise<void>;
  /** The run's own store server (private PostgreSQL or Redis), for the store rows. */
  store?: { stop(): Promise<void>; start(): Promise<void> };
  /** The run's queues (and tables). */
  names: FaultNames;
  /** What the fault did beyond the columns (which node, which leader), printed under the table. */
  note: (text: string) => void;
}

export interface Fault {
  /** In queue names and message ids. */
  id: string;
  /** In the table. */
  name: string;
  broker: BrokerKind;
  /** Recovery counts only messages of a consumer that did not exist before the fault (it replaces them). */
  newConsumer: boolean;
  inject: (ctx: FaultContext) => Promise<FaultWindow[]>;
  /** Why this row cannot run here (a missing script), or undefined. */
  skip?: () => string | undefined;
  /** The consumer deduplicates (PostgreSQL store, the key recorded in the effect's transaction). */
  dedupe?: boolean;
  /**
   * The run's store is a server of its own the fault stops and starts: `postgres` (the effects, the
   * deduplication table and the outbox of the effect) or `redis` (the deduplication store).
   */
  store?: 'postgres' | 'redis';
  /** The events come through the transactional outbox: written into its table, published by the flow's relay. */
  outbox?: boolean;
  /** The flow's attempts, kill switch, events output and error rules (fault-flow.ts); the suite's defaults otherwise. */
  flow?: Pick<FaultFlowOptions, 'maxAttempts' | 'circuit' | 'events' | 'permanent' | 'batch' | 'slowMs'>;
  /** false: the producer publishes no poison message (every message is good). */
  poison?: boolean;
  /** Asserted: the parked messages are exactly the poison ones the broker confirmed (none missing, no good one). */
  parksPoison?: boolean;
}

async function repeat(times: number, gapMs: number, once: () => Promise<FaultWindow>): Promise<FaultWindow[]> {
  const windows: FaultWindow[] = [];
  for (let i = 0; i < times; i += 1) {
    if (i > 0) await pause(gapMs);
    windows.push(await once());
  }
  return windows;
}

/** Times a fault: start before `hurt`, end once `healed` returned. */
async function timed(hurt: () => Promise<void>, healed: () => Promise<void>): Promise<FaultWindow> {
  const start = Date.now();
  await hurt();
  await healed();
  return { start, end: Date.now() };
}

/** A broker fault: over once the broker accepts connections again. */
const brokerFault = (broker: BrokerNode, hurt: () => Promise<void>): Promise<FaultWindow> => timed(hurt, () => acceptingConnections(broker.url));

export const FAULTS: Fault[] = [
  {
    id: 'close-all',
    name: '`close_all_connections` ×3',
    broker: 'single',
    newConsumer: true,
    inject: ({ broker }) =>
      repeat(3, 4_000, () =>
        brokerFault(broker, async () => {
          await broker.ctl('close_all_connections', 'fault suite');
        }),
      ),
  },
  {
    id: 'stop-app',
    name: '`stop_app` / `start_app`',
    broker: 'single',
    newConsumer: true,
    inject: async ({ broker }) => [
      await brokerFault(broker, async () => {
        await broker.ctl('stop_app');
        await pause(2_000);
        await broker.ctl('start_app');
      }),
    ],
  },
  {
    id: 'restart',
    name: 'broker process restart',
    broker: 'single',
    newConsumer: true,
    inject: async ({ broker }) => [
      await brokerFault(broker, async () => {
        await broker.stopNode();
        await broker.startNode();
      }),
    ],
  },
  {
    id: 'redeploy',
    name: 'full redeploy ×2 (admin API)',
    broker: 'single',
    newConsumer: true,
    inject: ({ redeploy }) => repeat(2, 4_000, () => timed(redeploy, () => Promise.resolve())),
  },
  {
    id: 'sigkill',
    name: 'SIGKILL of Node-RED, restart',
    broker: 'single',
    newConsumer: true,
    inject: async ({ killNodeRed, startNodeRed }) => [await timed(killNodeRed, startNodeRed)],
  },
  {
    id: 'mem-alarm',
    name: 'memory alarm 10 s while publishing',
    broker: 'single',
    newConsumer: false,
    inject: async ({ broker }) => [
      await brokerFault(broker, async () => {
        await broker.ctl('set_vm_memory_high_watermark', '0.000001');
        await pause(10_000);
        await broker.ctl('set_vm_memory_high_watermark', '0.4');
      }),
    ],
  },
  {
    id: 'cluster-node',
    name: 'cluster node stopped (3 nodes, all queues quorum)',
    broker: 'cluster',
    newConsumer: true,
    // The other nodes accept connections throughout: recovery counts from the stop command (the
    // node's shutdown included). The node starts again (and rejoins) afterwards.
    inject: async ({ broker }) => {
      const start = Date.now();
      await broker.stopNode();
      await pause(10_000);
      await broker.startNode();
      return [{ start, end: start }];
    },
  },
];

/** The faults that repeat deliveries (an ack lost with its connection, a redeploy, a kill), again with deduplication on. */
export const DEDUPE_FAULTS: Fault[] = [
  ...FAULTS.filter((f) => ['close-all', 'stop-app', 'restart', 'redeploy', 'sigkill'].includes(f.id)).map((f) => ({
    ...f,
    id: `${f.id}-dedupe`,
    name: `${f.name} · deduplicated`,
    dedupe: true,
  })),
  // The store itself fails: the consumer stops taking messages (red, naming the store) and consumes again once it answers.
  ...(['postgres', 'redis'] as const).map(
    (store): Fault => ({
      id: `${store}-restart`,
      name: `${store === 'postgres' ? 'PostgreSQL' : 'Redis'} restart · deduplicated in ${store === 'postgres' ? 'PostgreSQL' : 'Redis'}`,
      broker: 'single',
      newConsumer: false,
      dedupe: true,
      store,
      inject: async ({ store: server }) => {
        if (!server) throw new Error('no store server for this row');
        const start = Date.now();
        await server.stop();
        await pause(3_000);
        await server.start();
        return [{ start, end: Date.now() }];
      },
    }),
  ),
];

/**
 * End to end "once" through the transactional outbox: the test writes events into the outbox table
 * (some rolled back on purpose), the flow's relay publishes them, the consumer deduplicates and writes
 * the effect with its key in one transaction.
 */
export const OUTBOX_FAULTS: Fault[] = [
  ...FAULTS.filter((f) => ['close-all', 'restart', 'sigkill'].includes(f.id)),
  ...DEDUPE_FAULTS.filter((f) => f.id === 'postgres-restart'),
].map((f) => ({ ...f, id: `${f.id}-outbox`, name: `${f.name.replace(/ · deduplicated.*$/, '')} · through the outbox`, dedupe: true, outbox: true }));

/** How long the downstream outage rows stop the effect's database. */
export const OUTAGE_MS = 30_000;

/**
 * A downstream outage: the PostgreSQL the effect writes to (a server of the run's own) stopped
 * (`pg_ctl -m immediate stop`) for 30 s while publishing goes on, every message good, 5 attempts. Without
 * the kill switch every message that meets the outage spends its attempts and is parked; with it the
 * consumer (its kill switch at the defaults) stops taking messages once 15 % of its settles in 10 s fail,
 * probes, and consumes again once the database answers. The window ends when the database accepts connections again.
 */
const downstreamOutage = (circuit: boolean): Fault => ({
  id: circuit ? 'outage-kill-switch' : 'outage',
  name: `downstream outage: the effect's PostgreSQL stopped 30 s · ${circuit ? 'kill switch' : 'no kill switch'}`,
  broker: 'single',
  newConsumer: false,
  store: 'postgres',
  poison: false,
  flow: { maxAttempts: 5, circuit, events: true },
  inject: async ({ store }) => {
    if (!store) throw new Error('no store server for this row');
    const start = Date.now();
    await store.stop();
    await pause(OUTAGE_MS);
    await store.start();
    return [{ start, end: Date.now() }];
  },
});

/** The outage rows, and permanent errors: 5 % of the messages fail as HTTP 400, which a `permanent` rule of the retry config parks at once. */
export const DOWNSTREAM_FAULTS: Fault[] = [
  downstreamOutage(false),
  downstreamOutage(true),
  {
    id: 'permanent',
    name: 'permanent errors: 5 % fail with HTTP 400 (rule `4xx` → permanent)',
    broker: 'single',
    newConsumer: false,
    flow: { permanent: true },
    // No fault beside the errors themselves: 10 s more of the workload.
    inject: async () => {
      const start = Date.now();
      await pause(10_000);
      return [{ start, end: start }];
    },
  },
];

/** The batch rows' consumer (issue 51): batches of up to 50, a partial one after 500 ms; each batch held 300 ms in the flow, so batches are in the flow and in the consumer when the fault hits. */
const BATCHES = { batch: { size: 50, wait: 500 }, slowMs: 300 } as const;

/**
 * Batch mode (issue 51) under the faults that cut batches: a batch pending in the consumer and one in
 * the flow when the connections close, Node-RED is killed or the effect's database stops. Deduplicated
 * (the outbox write records every item's key in the batch's transaction): lost 0 and no effect repeated.
 */
export const BATCH_FAULTS: Fault[] = [
  ...DEDUPE_FAULTS.filter((f) => ['close-all-dedupe', 'sigkill-dedupe', 'postgres-restart'].includes(f.id)).map((f) => ({
    ...f,
    id: `${f.id}-batch`,
    name: f.name.replace(' · deduplicated', ' · batches of 50 · deduplicated'),
    flow: { ...f.flow, ...BATCHES },
  })),
];
