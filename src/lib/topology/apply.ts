/**
 * Applies a topology plan to a broker: `declare` asserts everything with its arguments, `check` only
 * looks (passive checks, never a declare). Runs on throwaway channels, because a 404 or 406 closes
 * the channel it happens on. Decisions branch on the AMQP reply `code`: the broker truncates texts.
 */
import type { Channel } from 'amqplib';
import type { QueueArguments } from './arguments';
import type { PlannedQueue, TopologyMode, TopologyPlan } from './plan';
import { describeDifference, describeDifferences, describePreconditionFailure, diffArguments, parsePreconditionFailure, type ArgumentDifference } from './diff';
import { brokerRetryVersionProblem, parseBrokerVersion, requestOfPlan, versionFindings, type VersionFindings } from './broker-version';

/** AMQP reply codes this module branches on. */
export const AMQP_CODE = { ACCESS_REFUSED: 403, NOT_FOUND: 404, RESOURCE_LOCKED: 405, PRECONDITION_FAILED: 406 } as const;

export class TopologyError extends Error {
  constructor(
    /** One sentence per problem, each naming the object (and argument) concerned. */
    readonly problems: string[],
    /** AMQP reply code of the first failure, when the broker gave one. */
    readonly code?: number,
    /** A check's findings per object, for a short summary (the status); `problems` has every sentence. */
    readonly objects?: readonly ObjectCheck[],
  ) {
    super(problems.join('; '));
    this.name = 'TopologyError';
  }
}

/** Reads queue and exchange definitions, e.g. through the management HTTP API. Optional. */
export interface DefinitionReader {
  queueArguments(name: string): Promise<QueueArguments | undefined>;
  exchangeType(name: string): Promise<string | undefined>;
  /** The exchange's arguments (e.g. `alternate-exchange`); optional for readers that cannot tell. */
  exchangeArguments?(name: string): Promise<Record<string, unknown> | undefined>;
  /** For an optional reader: why it cannot be read now (then nothing is compared), else undefined. */
  unavailable?(): Promise<string | undefined>;
}

export interface TopologyResult {
  /** Things worth a warning that did not stop the consumer. */
  warnings: string[];
  /** Check mode without a definition reader: the objects exist, their arguments were not compared. */
  argumentsUnchecked?: boolean;
}

export type ChannelRunner = <T>(work: (channel: Channel) => Promise<T>) => Promise<T>;

/** What the connected broker's version refuses or deprecates of the plan (its server properties' `version`). */
export async function brokerFindings(run: ChannelRunner, plan: TopologyPlan): Promise<VersionFindings & { version?: string }> {
  const version = await run((channel) => Promise.resolve(parseBrokerVersion((channel as { connection?: { serverProperties?: { version?: unknown } } }).connection?.serverProperties?.version)));
  return { ...versionFindings(requestOfPlan(plan), version), ...(version ? { version: version.text } : {}) };
}

function replyCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

function explain(err: unknown, kind: 'queue' | 'exchange', name: string, mode: TopologyMode, action: string): string {
  const code = replyCode(err);
  const text = err instanceof Error ? err.message : String(err);
  if (code === AMQP_CODE.NOT_FOUND) {
    return mode === 'check'
      ? `${kind} '${name}' does not exist on the broker (check mode never creates it): create it, or use declare mode`
      : `${kind} '${name}' was not found while trying to ${action}`;
  }
  if (code === AMQP_CODE.PRECONDITION_FAILED) {
    const failure = parsePreconditionFailure(text);
    return failure
      ? describePreconditionFailure(failure)
      : `${kind} '${name}' exists on the broker with different arguments or properties than the configuration`;
  }
  if (code === AMQP_CODE.ACCESS_REFUSED) {
    return `no permission to ${action} ${kind} '${name}'${mode === 'declare' ? ': grant configure permission, or use check mode' : ''}`;
  }
  if (code === AMQP_CODE.RESOURCE_LOCKED) return `${kind} '${name}' is exclusive to another connection`;
  return `${kind} '${name}': ${text}`;
}

/** Added to a declare's 406 on a queue when every difference cannot be looked up. */
export const FIRST_DIFFERENCE_ONLY = 'the broker names the first difference only: check mode with the management API URL set on the broker lists them all';

/**
 * A queue's declare was refused (406): the broker's text names one difference. With a definition
 * reader (the management API) every difference of the queue is looked up and said; without one (or
 * when it does not answer) the broker's one, and that check mode lists them all.
 */
async function refusedQueue(err: unknown, queue: PlannedQueue, reader: DefinitionReader | undefined): Promise<string> {
  const single = explain(err, 'queue', queue.name, 'declare', 'declare');
  const onBroker = reader && (await reader.unavailable?.()) === undefined ? await reader.queueArguments(queue.name).catch(() => undefined) : undefined;
  const differences = onBroker === undefined ? [] : diffArguments(onBroker, queue.arguments);
  return differences.length > 0 ? describeDifferences('queue', queue.name, differences) : `${single}; ${FIRST_DIFFERENCE_ONLY}`;
}

/**
 * Why the broker cannot run the plan (broker-native retry on a broker older than 4.3, which would
 * accept the arguments and ignore them), or undefined. Asked before anything is declared or checked.
 */
function versionProblem(plan: TopologyPlan, version: string | undefined): string | undefined {
  return plan.needsBrokerRetry ? brokerRetryVersionProblem(version) : undefined;
}

/**
 * Declares every exchange, queue (durable, with its arguments) and binding of the plan. `reader`
 * (optional, the management API): a queue refused for its arguments is looked up, and every difference said.
 */
export async function declareTopology(run: ChannelRunner, plan: TopologyPlan, reader?: DefinitionReader): Promise<TopologyResult> {
  const findings = await brokerFindings(run, plan);
  // Said before the broker's 406, with its version; nothing is declared.
  if (findings.refused.length > 0) throw new TopologyError(findings.refused, AMQP_CODE.PRECONDITION_FAILED);
  const refused = versionProblem(plan, findings.version);
  if (refused !== undefined) throw new TopologyError([refused]);
  await run(async (channel) => {
    let step: { kind: 'queue' | 'exchange'; name: string; action: string; queue?: PlannedQueue } = { kind: 'exchange', name: '', action: 'declare' };
    try {
      for (const ex of plan.exchanges) {
        step = { kind: 'exchange', name: ex.name, action: 'declare' };
        await channel.assertExchange(ex.name, ex.type, ex.arguments ? { durable: true, arguments: ex.arguments } : { durable: true });
      }
      for (const q of plan.queues) {
        step = { kind: 'queue', name: q.name, action: 'declare', queue: q };
        await channel.assertQueue(q.name, { durable: true, arguments: q.arguments });
      }
      for (const b of plan.bindings) {
        step = { kind: 'queue', name: b.queue, action: `bind to exchange '${b.exchange}' with '${b.routingKey}'` };
        await channel.bindQueue(b.queue, b.exchange, b.routingKey);
      }
    } catch (err) {
      const code = replyCode(err);
      if (code === AMQP_CODE.PRECONDITION_FAILED && step.queue) throw new TopologyError([await refusedQueue(err, step.queue, reader)], code);
      throw new TopologyError([explain(err, step.kind, step.name, 'declare', step.action)], code);
    }
  });
  return { warnings: findings.deprecated };
}

/** What a passive check found for one exchange or queue of the plan. */
export interface ObjectCheck {
  kind: 'exchange' | 'queue';
  name: string;
  /** A queue's part in the pattern. */
  role?: PlannedQueue['role'];
  /** `differs`: it exists, with other arguments (or exchange type) than the configuration's. */
  state: 'ok' | 'missing' | 'differs' | 'error';
  /** Per argument (`type` for an exchange's type): `config` expected, `broker` actual. */
  differences: ArgumentDifference[];
  /** The sentences the runtime reports for it. */
  problems: string[];
}

export interface TopologyInspection {
  objects: ObjectCheck[];
  /** False without a definition reader: only existence was checked over AMQP. */
  compared: boolean;
  /** Why an optional definition reader was not used (it did not answer). */
  uncompared?: string;
  /** AMQP reply code of the first failure, when the broker gave one. */
  firstCode?: number;
  /** The broker's version (its server properties), when it says it. */
  brokerVersion?: string;
  /** What that version refuses of the configuration (a declare would get a 406), one sentence each. */
  refused?: string[];
  /** What it accepts but deprecates or ignores. */
  deprecated?: string[];
}

/**
 * Looks at every exchange and queue of the plan with passive declares only, each on its own channel
 * (a 404 closes the channel, and every missing object gets reported). With a definition reader (the
 * management API) the queue arguments and exchange types are compared too.
 */
export async function inspectTopology(run: ChannelRunner, plan: TopologyPlan, optionalReader?: DefinitionReader): Promise<TopologyInspection> {
  const uncompared = await optionalReader?.unavailable?.();
  const reader = uncompared === undefined ? optionalReader : undefined;
  const inspection: TopologyInspection = { objects: [], compared: reader !== undefined, ...(uncompared !== undefined ? { uncompared } : {}) };
  const findings = await brokerFindings(run, plan);
  if (findings.version !== undefined) inspection.brokerVersion = findings.version;
  if (findings.refused.length > 0) inspection.refused = findings.refused;
  if (findings.deprecated.length > 0) inspection.deprecated = findings.deprecated;
  const refused = versionProblem(plan, findings.version);
  const main = plan.queues.find((q) => q.role === 'main');
  if (refused !== undefined && main) {
    inspection.objects.push({ kind: 'queue', name: main.name, role: 'main', state: 'error', differences: [], problems: [refused] });
    return inspection;
  }
  const look = async (check: ObjectCheck, op: (ch: Channel) => Promise<unknown>, compare: () => Promise<ArgumentDifference[]>): Promise<void> => {
    inspection.objects.push(check);
    try {
      await run(op);
    } catch (err) {
      const code = replyCode(err);
      inspection.firstCode ??= code;
      check.state = code === AMQP_CODE.NOT_FOUND ? 'missing' : 'error';
      // An existing main queue's configuration creates its own queues (and a missing main queue) at deploy.
      const created = plan.existingMainQueue === true && check.kind === 'queue' && code === AMQP_CODE.NOT_FOUND;
      check.problems.push(created ? `queue '${check.name}' does not exist yet: deploying creates it` : explain(err, check.kind, check.name, 'check', 'check'));
      return;
    }
    check.differences = await compare();
    if (check.differences.length > 0) check.state = 'differs';
  };
  for (const ex of plan.exchanges) {
    const check: ObjectCheck = { kind: 'exchange', name: ex.name, state: 'ok', differences: [], problems: [] };
    await look(check, (ch) => ch.checkExchange(ex.name), async () => {
      if (!reader) return [];
      const differences: ArgumentDifference[] = [];
      const type = await reader.exchangeType(ex.name);
      if (type !== undefined && type !== ex.type) {
        check.problems.push(`exchange '${ex.name}': type is '${type}' on the broker, config says '${ex.type}'`);
        differences.push({ argument: 'type', broker: type, config: ex.type });
      }
      // Only the arguments the configuration sets: an exchange may carry others it does not care about.
      const onBroker = ex.arguments && (await reader.exchangeArguments?.(ex.name));
      if (onBroker && ex.arguments) {
        const relevant = Object.fromEntries(Object.entries(onBroker).filter(([key]) => key in (ex.arguments ?? {})));
        for (const diff of diffArguments(relevant, ex.arguments)) {
          check.problems.push(describeDifference('exchange', ex.name, diff));
          differences.push(diff);
        }
      }
      return differences;
    });
  }
  for (const q of plan.queues) {
    const check: ObjectCheck = { kind: 'queue', name: q.name, role: q.role, state: 'ok', differences: [], problems: [] };
    await look(check, (ch) => ch.checkQueue(q.name), async () => {
      // Someone else's main queue keeps its own arguments: nothing to compare.
      const theirs = plan.existingMainQueue === true && q.role === 'main';
      const onBroker = reader && !theirs ? await reader.queueArguments(q.name) : undefined;
      const differences = onBroker === undefined ? [] : diffArguments(onBroker, q.arguments);
      // One sentence per queue: the way out (its arguments cannot be changed) is said once.
      if (differences.length > 0) check.problems.push(describeDifferences('queue', q.name, differences));
      return differences;
    });
  }
  return inspection;
}

/**
 * Checks that every exchange and queue exists (see inspectTopology); without a definition reader
 * only existence can be checked over AMQP, which the result says as a warning.
 */
export async function checkTopology(run: ChannelRunner, plan: TopologyPlan, reader?: DefinitionReader): Promise<TopologyResult> {
  const inspection = await inspectTopology(run, plan, reader);
  // What the broker's version refuses comes first, alone (the status says it, not the objects' states):
  // the configuration must change whatever the broker holds.
  if (inspection.refused) throw new TopologyError(inspection.refused, AMQP_CODE.PRECONDITION_FAILED);
  const problems = inspection.objects.flatMap((o) => o.problems);
  if (problems.length > 0) throw new TopologyError(problems, inspection.firstCode, inspection.objects);
  const warnings = inspection.deprecated ?? [];
  if (inspection.compared) return { warnings };
  const why = inspection.uncompared !== undefined ? `${inspection.uncompared}; ` : '';
  return { warnings: [...warnings, `check mode: queues and exchanges exist; their arguments were not compared (${why}set the management API URL on the broker to compare them)`], argumentsUnchecked: true };
}

/**
 * Check mode on a main queue that belongs to someone else (plan.existingMainQueue): every exchange and
 * the main queue are checked passively, never redeclared (their arguments cannot conflict: no 406);
 * a missing main queue is created durable with the configuration's extra arguments only. Then the
 * configuration's own retry and parking queues are declared and the main queue bound (bindings never
 * conflict). Without a definition reader nothing else is compared: the result says so.
 */
export async function adoptTopology(run: ChannelRunner, plan: TopologyPlan): Promise<TopologyResult> {
  for (const ex of plan.exchanges) {
    await run((ch) => ch.checkExchange(ex.name)).catch((err: unknown) => {
      throw new TopologyError([explain(err, 'exchange', ex.name, 'check', 'check')], replyCode(err));
    });
  }
  for (const q of plan.queues) {
    if (q.role === 'main') {
      await run((ch) => ch.checkQueue(q.name)).catch(async (err: unknown) => {
        if (replyCode(err) !== AMQP_CODE.NOT_FOUND) throw new TopologyError([explain(err, 'queue', q.name, 'check', 'check')], replyCode(err));
        await run((ch) => ch.assertQueue(q.name, { durable: true, arguments: q.arguments }));
      });
    } else {
      await run((ch) => ch.assertQueue(q.name, { durable: true, arguments: q.arguments })).catch(async (err: unknown) => {
        throw new TopologyError([await refusedQueue(err, q, undefined)], replyCode(err));
      });
    }
  }
  for (const b of plan.bindings) {
    await run((ch) => ch.bindQueue(b.queue, b.exchange, b.routingKey)).catch((err: unknown) => {
      throw new TopologyError([explain(err, 'queue', b.queue, 'check', `bind to exchange '${b.exchange}' with '${b.routingKey}'`)], replyCode(err));
    });
  }
  return { warnings: [] };
}

export async function applyTopology(run: ChannelRunner, plan: TopologyPlan, mode: TopologyMode, reader?: DefinitionReader): Promise<TopologyResult> {
  if (plan.existingMainQueue === true && mode === 'check') return adoptTopology(run, plan);
  return mode === 'declare' ? declareTopology(run, plan, reader) : checkTopology(run, plan, reader);
}

/**
 * Makes sure a plain queue exists (e.g. a reply queue): a passive check first, and a durable declare
 * without arguments only when it is missing, so a queue created elsewhere with arguments is left alone.
 */
export async function ensureQueueExists(connection: { withThrowawayChannel: ChannelRunner }, queue: string): Promise<void> {
  try {
    await connection.withThrowawayChannel((ch) => ch.checkQueue(queue));
    return;
  } catch (err) {
    if (replyCode(err) !== AMQP_CODE.NOT_FOUND) throw new Error(explain(err, 'queue', queue, 'check', 'check'), { cause: err });
  }
  try {
    await connection.withThrowawayChannel((ch) => ch.assertQueue(queue, { durable: true }));
  } catch (err) {
    throw new Error(explain(err, 'queue', queue, 'declare', 'declare'), { cause: err });
  }
}
