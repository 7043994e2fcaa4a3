/**
 * The health report's inputs, collected from the deployed nodes through the objects that own each
 * part: a broker node's connection, the consumer sessions a retry configuration owns, a
 * deduplication store node's store and a PostgreSQL node's database (asked to answer now, for at most
 * PING_MS), an outbox relay node's last look at its table. Nothing is registered anywhere: the
 * deployed flows are walked at each request.
 */
import type { BrokerInput, ConsumerInput, DatabaseInput, HealthInput, RelayInput, StoreInput } from '../../lib/health';
import { findBroker } from './broker-node';
import { findDedupeStore } from './dedupe-node';
import { stringProp, type NodeAPI, type NodeDef } from './node-red';
import { NODE_TYPE, type NodeType } from './node-types';
import type { RelayNode } from './outbox-node';
import { findPostgres } from './postgres-node';
import { findRetryConfig, type RetryConsumerNode } from './retry-config-node';

/** How long a store or a database may take to answer a probe's ping. */
export const PING_MS = 2000;

/** Resolves undefined when `work` answers within `ms`, else with why not. */
async function answers(work: () => Promise<unknown>, ms: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${ms / 1000} s`), ms);
  });
  try {
    return await Promise.race([
      work().then(
        () => undefined,
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function broker(RED: NodeAPI, def: NodeDef): BrokerInput | undefined {
  const node = findBroker(RED, def.id);
  if (!node) return undefined;
  const { connection } = node;
  const { phase, error, address } = connection.state;
  return { id: def.id, name: stringProp(def.name) || node.display, url: node.display, phase, since: connection.since, error, nextAttemptAt: connection.nextAttemptAt, address, used: connection.userCount > 0 };
}

/**
 * Every consumer: those with a session, found through their configuration's sessions (a consumer in a
 * subflow instance too), then those that did not start (their configuration cannot work).
 */
function consumers(RED: NodeAPI, defs: NodeDef[]): ConsumerInput[] {
  const found: ConsumerInput[] = [];
  const seen = new Set<string>();
  for (const def of defs.filter((d) => d.type === NODE_TYPE.retryConfig)) {
    const config = findRetryConfig(RED, def.id);
    if (!config) continue;
    const queue = config.topology?.mainQueue ?? '';
    for (const owner of config.consumers.owners()) {
      // A partitioned consumer: the first partition that is not consuming speaks for it.
      const sessions = config.consumers.latestOf(owner, Math.max(1, config.topology?.partitions ?? 1));
      const session = sessions.find((s) => s.state.phase !== 'consuming') ?? sessions[0];
      if (!session || seen.has(owner)) continue;
      seen.add(owner);
      const name = stringProp(RED.nodes.getNode(owner)?.name) || queue || owner;
      const { phase, detail, storeProblem } = session.state;
      found.push({ id: owner, name, queue, phase, detail, ...(storeProblem ? { storeProblem } : {}), circuit: session.circuit?.state });
    }
  }
  for (const def of defs.filter((d) => d.type === NODE_TYPE.retryConsumer && !seen.has(d.id))) {
    const node: RetryConsumerNode | null = RED.nodes.getNode(def.id);
    if (!node) continue;
    const queue = findRetryConfig(RED, def.config)?.topology?.mainQueue ?? '';
    found.push({ id: def.id, name: stringProp(def.name) || queue || def.id, queue, phase: 'not-started', detail: node.startProblem });
  }
  return found;
}

async function store(RED: NodeAPI, def: NodeDef, used: boolean, pingMs: number): Promise<StoreInput | undefined> {
  const node = findDedupeStore(RED, def.id);
  if (!node) return undefined;
  const description = node.store?.description ?? stringProp(def.kind, 'memory');
  const base = { id: def.id, name: stringProp(def.name) || description, store: description, used };
  const { store: dedupe } = node;
  if (!dedupe) return { ...base, problem: `not usable: ${node.problems.join('; ')}` };
  // An unused store is not asked: its connection may never have been opened.
  return used ? { ...base, problem: await answers(() => dedupe.ping(), pingMs) } : base;
}

async function database(RED: NodeAPI, def: NodeDef, used: boolean, pingMs: number): Promise<DatabaseInput | undefined> {
  const node = findPostgres(RED, def.id);
  if (!node) return undefined;
  const base = { id: def.id, name: stringProp(def.name) || node.display, database: node.display, used };
  const db = node.database;
  if (!db) return { ...base, phase: 'invalid', problem: node.problems.join('; ') };
  if (!used) return { ...base, phase: db.state.phase };
  // Asked now: an idle pool learns that its database went away only when it is used.
  const failed = await answers(() => db.ping(), pingMs);
  if (failed === undefined) return { ...base, phase: 'up' };
  const state = db.state;
  return { ...base, phase: state.phase === 'closed' ? 'closed' : 'down', problem: state.phase === 'down' ? state.detail : failed };
}

function relay(RED: NodeAPI, def: NodeDef): RelayInput | undefined {
  const node = RED.nodes.getNode(def.id) as RelayNode | null;
  if (!node || typeof node.relayHealth !== 'function') return undefined;
  const health = node.relayHealth();
  return { id: def.id, name: stringProp(def.name) || health.table || def.id, ...health };
}

/** The states of every deployed part of the package, now. */
export async function collectHealth(RED: NodeAPI, pingMs = PING_MS): Promise<HealthInput> {
  const defs: NodeDef[] = [];
  RED.nodes.eachNode((def) => {
    // Only the nodes that run (a disabled flow's are not instances).
    if (RED.nodes.getNode(def.id)) defs.push(def);
  });
  const of = (type: NodeType): NodeDef[] => defs.filter((def) => def.type === type);
  // What a store or a database is used by: the running nodes that name it.
  const stores = new Set(of(NODE_TYPE.retryConsumer).map((def) => stringProp(def.dedupe)));
  const databases = new Set(
    defs.filter((def) => def.type === NODE_TYPE.outboxWrite || def.type === NODE_TYPE.outboxRelay || (def.type === NODE_TYPE.retryDedupe && def.kind === 'postgres')).map((def) => stringProp(def.postgres)),
  );
  const present = <T>(list: Array<T | undefined>): T[] => list.filter((item): item is T => item !== undefined);
  const [storeInputs, databaseInputs] = await Promise.all([
    Promise.all(of(NODE_TYPE.retryDedupe).map((def) => store(RED, def, stores.has(def.id), pingMs))),
    Promise.all(of(NODE_TYPE.retryPostgres).map((def) => database(RED, def, databases.has(def.id), pingMs))),
  ]);
  return {
    brokers: present(of(NODE_TYPE.retryBroker).map((def) => broker(RED, def))),
    consumers: consumers(RED, defs),
    stores: present(storeInputs),
    databases: present(databaseInputs),
    relays: present(of(NODE_TYPE.outboxRelay).map((def) => relay(RED, def))),
  };
}
