/**
 * The health report, pure: from the plain states of each part (types.ts) and the time, what each part
 * is (its status and why), and whether the whole is ready. Ready only when no part is `waiting` or
 * `down`; a part paused by a user, unused, or degraded on purpose (the kill switch) does not count
 * against it.
 */
import type {
  BrokerInput,
  BrokerReport,
  ConsumerInput,
  ConsumerReport,
  DatabaseInput,
  DatabaseReport,
  HealthInput,
  HealthReport,
  PartStatus,
  RelayInput,
  RelayReport,
  StoreInput,
  StoreReport,
} from './types';

/** Whether a part's status keeps the report from being ready. */
export function keepsFromReady(status: PartStatus): boolean {
  return status === 'waiting' || status === 'down';
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function brokerReport(broker: BrokerInput): BrokerReport {
  const { id, name, url, phase, since, error, nextAttemptAt, address, used } = broker;
  const base = { id, name, url, connected: phase === 'connected', since: iso(since) };
  if (phase === 'connected') return { ...base, status: error ? 'degraded' : 'up', address, ...(error ? { reason: error } : {}) };
  if (phase === 'invalid') return { ...base, status: used ? 'down' : 'unused', reason: `configuration not usable: ${error ?? 'invalid'}` };
  if (!used) return { ...base, status: 'unused' };
  if (phase === 'waiting') {
    const next = nextAttemptAt === undefined ? {} : { nextAttempt: iso(nextAttemptAt) };
    return { ...base, status: 'down', reason: `cannot connect: ${error ?? 'disconnected'}`, ...next };
  }
  if (phase === 'connecting') return { ...base, status: 'waiting', reason: error ? `connecting again after: ${error}` : 'connecting' };
  return { ...base, status: 'down', reason: 'connection closed' };
}

/** A consumer's state: what it means for readiness. */
function consumerStatus(consumer: ConsumerInput): { status: PartStatus; reason?: string } {
  const { phase, detail, circuit } = consumer;
  switch (phase) {
    case 'consuming':
      return circuit === 'probing' ? { status: 'degraded', reason: 'kill switch probing: one message at a time' } : { status: 'up' };
    case 'paused':
      return { status: 'paused', reason: 'paused by a control message' };
    case 'circuit-open':
      return { status: 'degraded', reason: 'kill switch open: not taking messages while the downstream fails; they wait in the queue' };
    case 'blocked':
      return { status: 'degraded', reason: detail ?? 'ordered processing blocked by a failing message' };
    case 'waiting-for-connection':
      return { status: 'waiting', reason: 'waiting for the broker connection' };
    case 'checking-topology':
      return { status: 'waiting', reason: 'checking its topology' };
    case 'store-down':
      // Its table missing or not as expected: the database answers, the table needs someone.
      if (consumer.storeProblem === 'schema') return { status: 'down', reason: `deduplication table not usable: ${detail ?? 'see the log'}` };
      return { status: 'down', reason: `deduplication store down: ${detail ?? 'not answering'}` };
    case 'topology-error':
      return { status: 'down', reason: `topology failed: ${detail ?? 'see the log'}` };
    case 'channel-lost':
      return { status: 'down', reason: `channel lost: ${detail ?? 'see the log'}` };
    case 'stopped':
      return { status: 'down', reason: 'stopped' };
    case 'not-started':
      return { status: 'down', reason: `not started: ${detail ?? 'its configuration cannot work'}` };
  }
}

export function consumerReport(consumer: ConsumerInput): ConsumerReport {
  const { id, name, queue, phase, circuit } = consumer;
  return { id, name, queue, state: phase, ...(circuit ? { circuit } : {}), ...consumerStatus(consumer) };
}

export function storeReport(store: StoreInput): StoreReport {
  const { id, name, used, problem } = store;
  const base = { id, name, store: store.store };
  if (!used) return { ...base, status: 'unused', ...(problem ? { reason: problem } : {}) };
  return problem ? { ...base, status: 'down', reason: problem } : { ...base, status: 'up' };
}

export function databaseReport(database: DatabaseInput): DatabaseReport {
  const { id, name, used, phase, problem } = database;
  const base = { id, name, database: database.database };
  if (!used) return { ...base, status: 'unused', ...(problem ? { reason: problem } : {}) };
  switch (phase) {
    case 'up':
      return { ...base, status: 'up' };
    case 'connecting':
      return { ...base, status: 'waiting', reason: 'connecting' };
    case 'closed':
      return { ...base, status: 'down', reason: 'closed' };
    case 'invalid':
      return { ...base, status: 'down', reason: `configuration not usable: ${problem ?? 'invalid'}` };
    case 'down':
      return { ...base, status: 'down', reason: problem ?? 'not answering' };
  }
}

export function relayReport(relay: RelayInput, now: number): RelayReport {
  const { id, name, table, problem, brokerConnected, look } = relay;
  const counts = look && 'pending' in look ? look : undefined;
  const base = {
    id,
    name,
    table,
    pending: counts?.pending ?? null,
    failed: counts?.failed ?? null,
    // Its age per the database's clock when looked at, plus the time since.
    oldestPendingSeconds: counts && counts.oldestPendingMs !== null ? Math.round((counts.oldestPendingMs + Math.max(0, now - counts.at)) / 1000) : null,
  };
  if (problem) return { ...base, status: 'down', reason: problem };
  if (look && 'error' in look) return { ...base, status: 'down', reason: `cannot read its table: ${look.error}` };
  if (!brokerConnected) return { ...base, status: 'waiting', reason: 'waiting for the broker connection' };
  if (counts && counts.failed > 0) return { ...base, status: 'degraded', reason: `${counts.failed === 1 ? '1 event' : `${counts.failed} events`} failed, not published (send msg.topic "retry" to try again)` };
  return { ...base, status: 'up' };
}

/** `broker 'local' (amqp://…): cannot connect: …` */
function sentence(kind: string, part: { name: string; status: PartStatus; reason?: string }): string {
  return `${kind} '${part.name}': ${part.reason ?? part.status}`;
}

/** The report of every part, and whether the whole is ready, at `now` (ms since epoch). */
export function healthReport(input: HealthInput, now: number): HealthReport {
  const brokers = input.brokers.map(brokerReport);
  const consumers = input.consumers.map(consumerReport);
  const stores = input.stores.map(storeReport);
  const databases = input.databases.map(databaseReport);
  const relays = input.relays.map((relay) => relayReport(relay, now));
  const parts: Array<[string, Array<{ name: string; status: PartStatus; reason?: string }>]> = [
    ['broker', brokers],
    ['consumer', consumers],
    ['deduplication store', stores],
    ['database', databases],
    ['outbox relay', relays],
  ];
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const [kind, list] of parts) {
    for (const part of list) {
      if (keepsFromReady(part.status)) problems.push(sentence(kind, part));
      else if (part.status === 'degraded') warnings.push(sentence(kind, part));
    }
  }
  const ready = problems.length === 0;
  return {
    ready,
    status: !ready ? 'not ready' : warnings.length > 0 ? 'degraded' : 'ready',
    at: iso(now),
    problems,
    warnings,
    brokers,
    consumers,
    stores,
    databases,
    relays,
  };
}
