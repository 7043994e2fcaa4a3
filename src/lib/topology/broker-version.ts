/**
 * What a broker of a given version refuses (or no longer honours) of what a topology asks for, said
 * before anything is declared, in one sentence each with the broker's version; whether it runs
 * broker-native retry, and the frame a consumer dead-letters with on it. Pure.
 *
 * Measured on RabbitMQ 4.3.6 (Debian forky), against 4.0.5:
 * - `x-queue-version: 1` on a classic queue: 406 on 4.3 (classic queue version 1 was removed), accepted on 4.0;
 * - `x-queue-mode`: accepted and ignored (classic queues keep messages on disk since 3.12);
 * - a non-durable queue that is not exclusive: deprecated feature `transient_nonexcl_queues`, permitted by
 *   default on 4.3.6, refused where the operator denies it;
 * - global QoS: deprecated feature `global_qos`, denied by default on 4.3 (the broker logs an error and the
 *   prefetch counts per consumer).
 * The package itself declares every queue durable and sets the prefetch per consumer: the last two only
 * arise from a request built by hand.
 */
import { isQuorum, type QueueArguments } from './arguments';
import type { TopologyPlan } from './plan';

export interface BrokerVersion {
  major: number;
  minor: number;
  patch: number;
  /** As the broker says it (`4.3.6`). */
  text: string;
}

/** The `version` of a connection's server properties; undefined when it is not a version. */
export function parseBrokerVersion(version: unknown): BrokerVersion | undefined {
  const text = typeof version === 'string' ? version : Buffer.isBuffer(version) ? version.toString() : undefined;
  const match = text === undefined ? null : /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(text.trim());
  if (!match || text === undefined) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3] ?? 0), text: text.trim() };
}

export function versionAtLeast(version: BrokerVersion, major: number, minor: number): boolean {
  return version.major > major || (version.major === major && version.minor >= minor);
}

/** What is asked of the broker: queues as they are declared, and the QoS. */
export interface BrokerRequest {
  queues: Array<{ name: string; durable: boolean; exclusive: boolean; arguments: QueueArguments }>;
  globalQos: boolean;
}

/** A retry topology's request: every queue durable and not exclusive, the prefetch per consumer. */
export function requestOfPlan(plan: TopologyPlan): BrokerRequest {
  return { queues: plan.queues.map((q) => ({ name: q.name, durable: true, exclusive: false, arguments: q.arguments })), globalQos: false };
}

export interface VersionFindings {
  /** The broker answers these with a 406: nothing may be declared. */
  refused: string[];
  /** Accepted, but deprecated or ignored on this version: worth a warning. */
  deprecated: string[];
}

/** What `version` refuses or no longer honours of `request` (nothing before 4.3). */
export function versionFindings(request: BrokerRequest, version: BrokerVersion | undefined): VersionFindings {
  const findings: VersionFindings = { refused: [], deprecated: [] };
  if (!version || !versionAtLeast(version, 4, 3)) return findings;
  const rabbit = `RabbitMQ ${version.text}`;
  for (const q of request.queues) {
    const queueVersion = q.arguments['x-queue-version'];
    if (queueVersion !== undefined && Number(queueVersion) === 1) {
      findings.refused.push(`queue '${q.name}': ${rabbit} refuses the argument x-queue-version 1 (classic queue version 1 was removed in 4.3): remove it, or set it to 2`);
    }
    if (q.arguments['x-queue-mode'] !== undefined) {
      findings.deprecated.push(`queue '${q.name}': ${rabbit} ignores the argument x-queue-mode (classic queues keep their messages on disk since 3.12): remove it`);
    }
    if (!q.durable && !q.exclusive) {
      findings.deprecated.push(`queue '${q.name}': ${rabbit} deprecates non-durable queues that are not exclusive (refused where the operator denies transient_nonexcl_queues): declare it durable, or exclusive`);
    }
  }
  if (request.globalQos) {
    findings.deprecated.push(`${rabbit} does not permit global QoS by default (deprecated feature global_qos): set the prefetch per consumer`);
  }
  return findings;
}

/** Whether a broker of this version (as it says it) delays a returned message itself: RabbitMQ 4.3 or later. */
export function runsBrokerRetry(version: string | undefined): boolean {
  const parsed = parseBrokerVersion(version);
  return parsed !== undefined && versionAtLeast(parsed, 4, 3);
}

/** Why this broker cannot run broker-native retry (one sentence with its version), or undefined when it can. */
export function brokerRetryVersionProblem(version: string | undefined): string | undefined {
  if (runsBrokerRetry(version)) return undefined;
  const shown = version ? `RabbitMQ ${version}` : 'a broker that does not say its version';
  return `broker-native delayed retry needs RabbitMQ 4.3 or later, this is ${shown} (older brokers accept its arguments and ignore them, so retries would not wait): choose "retry queues" as the delayed retry, or upgrade the broker`;
}

/**
 * How a consumer dead-letters a failed delivery (without requeue): `nack`, the settles of a turn in runs,
 * one `multiple` frame each; `reject`, one `basic.reject` per message.
 */
export type DeadLetterFrame = 'nack' | 'reject';

/**
 * The dead-letter frame for a main queue with these arguments on a broker of this version (as it says
 * it). RabbitMQ 4.3+ counts a failure towards a quorum queue's delivery limit only for a reject: a quorum
 * main queue there, or where the version is unknown, gets one reject per message. A classic queue (and a
 * quorum queue before 4.3, which counts every return) dead-letters the same way, with the same
 * `x-death`, from one `multiple` nack.
 */
export function deadLetterFrame(mainQueueArguments: QueueArguments, version: unknown): DeadLetterFrame {
  if (!isQuorum(mainQueueArguments)) return 'nack';
  const parsed = parseBrokerVersion(version);
  return parsed === undefined || versionAtLeast(parsed, 4, 3) ? 'reject' : 'nack';
}
