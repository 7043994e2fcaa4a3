/**
 * What the broker's answers to a topology mean: the AMQP reply codes the package branches on, the
 * TopologyError with one sentence per problem, the sentences for a refused declare or check, and the
 * types applying (apply.ts) and checking (inspect.ts) share. Decisions branch on the reply `code`: the
 * broker truncates texts.
 */
import type { Channel } from 'amqplib';
import type { QueueArguments } from './arguments';
import type { PlannedQueue, TopologyMode, TopologyPlan } from './plan';
import { describeDifferences, describePreconditionFailure, diffArguments, parsePreconditionFailure, type ArgumentDifference } from './diff';
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

export function replyCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

export function explain(err: unknown, kind: 'queue' | 'exchange', name: string, mode: TopologyMode, action: string): string {
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
export async function refusedQueue(err: unknown, queue: PlannedQueue, reader: DefinitionReader | undefined): Promise<string> {
  const single = explain(err, 'queue', queue.name, 'declare', 'declare');
  const onBroker = reader && (await reader.unavailable?.()) === undefined ? await reader.queueArguments(queue.name).catch(() => undefined) : undefined;
  const differences = onBroker === undefined ? [] : diffArguments(onBroker, queue.arguments);
  return differences.length > 0 ? describeDifferences('queue', queue.name, differences) : `${single}; ${FIRST_DIFFERENCE_ONLY}`;
}

/**
 * Why the broker cannot run the plan (broker-native retry on a broker older than 4.3, which would
 * accept the arguments and ignore them), or undefined. Asked before anything is declared or checked.
 */
export function versionProblem(plan: TopologyPlan, version: string | undefined): string | undefined {
  return plan.needsBrokerRetry ? brokerRetryVersionProblem(version) : undefined;
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
