/**
 * Applies a topology plan to a broker: `declare` asserts everything with its arguments, `check` only
 * looks (passive checks, never a declare). Runs on throwaway channels, because a 404 or 406 closes
 * the channel it happens on. Decisions branch on the AMQP reply `code`: the broker truncates texts.
 */
import type { PlannedQueue, TopologyMode, TopologyPlan } from './plan';
import { AMQP_CODE, brokerFindings, explain, refusedQueue, replyCode, TopologyError, versionProblem, type ChannelRunner, type DefinitionReader, type TopologyResult } from './broker-answers';
import { checkTopology } from './inspect';

/** The broker's answers (broker-answers.ts) and check mode (inspect.ts), named here too, where they were first. */
export { AMQP_CODE, brokerFindings, FIRST_DIFFERENCE_ONLY, TopologyError, type ChannelRunner, type DefinitionReader, type ObjectCheck, type TopologyResult } from './broker-answers';
export { checkTopology, inspectTopology, type TopologyInspection } from './inspect';

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
