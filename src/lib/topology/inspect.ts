/**
 * Check mode: every exchange and queue of a plan looked at passively (never a declare), their
 * arguments compared with the broker's definitions when a reader is given, each object's findings said.
 */
import type { Channel } from 'amqplib';
import type { TopologyPlan } from './plan';
import { describeDifference, describeDifferences, diffArguments, type ArgumentDifference } from './diff';
import { AMQP_CODE, brokerFindings, explain, replyCode, TopologyError, versionProblem, type ChannelRunner, type DefinitionReader, type ObjectCheck, type TopologyResult } from './broker-answers';

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
