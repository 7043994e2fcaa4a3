import assert from 'node:assert/strict';
import type { Channel } from 'amqplib';
import { checkTopology, declareTopology, inspectTopology, type ChannelRunner } from '../../../src/lib/topology/apply';
import { deadLetterFrame, parseBrokerVersion, requestOfPlan, versionAtLeast, versionFindings, type BrokerRequest } from '../../../src/lib/topology/broker-version';
import { planTopology, type RetryTopologyConfig } from '../../../src/lib/topology';
import { seedTopology } from '../fixtures/topology-seed';

const v = (text: string) => parseBrokerVersion(text);
const queue = (args: Record<string, unknown>, durable = true, exclusive = false): BrokerRequest => ({ queues: [{ name: 'orders', durable, exclusive, arguments: args }], globalQos: false });

describe('parseBrokerVersion / versionAtLeast', () => {
  it('reads the server properties version (a string or a buffer)', () => {
    assert.deepEqual(v('4.3.6'), { major: 4, minor: 3, patch: 6, text: '4.3.6' });
    assert.deepEqual(parseBrokerVersion(Buffer.from('3.10.8')), { major: 3, minor: 10, patch: 8, text: '3.10.8' });
    assert.deepEqual(v('4.1'), { major: 4, minor: 1, patch: 0, text: '4.1' });
  });

  it('undefined for anything that is not a version', () => {
    assert.equal(parseBrokerVersion(undefined), undefined);
    assert.equal(parseBrokerVersion('latest'), undefined);
    assert.equal(parseBrokerVersion(43), undefined);
  });

  it('compares major then minor', () => {
    assert.equal(versionAtLeast(v('4.3.0')!, 4, 3), true);
    assert.equal(versionAtLeast(v('5.0.1')!, 4, 3), true);
    assert.equal(versionAtLeast(v('4.2.9')!, 4, 3), false);
    assert.equal(versionAtLeast(v('3.13.7')!, 4, 3), false);
  });
});

// Issue 52, item 7: a dead-letter is one frame per message only where RabbitMQ needs it.
describe('deadLetterFrame: a reject per message only for a quorum main queue on RabbitMQ 4.3+', () => {
  const quorum = { 'x-queue-type': 'quorum' };

  it('a classic main queue dead-letters with nacks (batched) on every version, and when the version is unknown', () => {
    for (const version of ['3.10.8', '4.0.5', '4.3.6', '5.0.0', undefined]) {
      assert.equal(deadLetterFrame({}, version), 'nack', String(version));
      assert.equal(deadLetterFrame({ 'x-queue-type': 'classic', 'x-max-priority': 5 }, version), 'nack', String(version));
    }
  });

  it('a quorum main queue: a reject from 4.3 on (only a reject counts towards its delivery limit), a nack before', () => {
    assert.equal(deadLetterFrame(quorum, '4.3.6'), 'reject');
    assert.equal(deadLetterFrame(quorum, '4.3.0'), 'reject');
    assert.equal(deadLetterFrame(quorum, Buffer.from('5.0.1')), 'reject');
    assert.equal(deadLetterFrame(quorum, '4.2.9'), 'nack');
    assert.equal(deadLetterFrame(quorum, '4.0.5'), 'nack');
    assert.equal(deadLetterFrame(quorum, '3.10.8'), 'nack');
  });

  it('a quorum main queue on a broker that does not say its version: a reject, counted on every version', () => {
    assert.equal(deadLetterFrame(quorum, undefined), 'reject');
    assert.equal(deadLetterFrame(quorum, 'latest'), 'reject');
  });
});

describe('versionFindings: what RabbitMQ 4.3 refuses or deprecates, case by case', () => {
  it('x-queue-version 1 (number or text) is refused, in one sentence with the version and the way out', () => {
    const expected = "queue 'orders': RabbitMQ 4.3.6 refuses the argument x-queue-version 1 (classic queue version 1 was removed in 4.3): remove it, or set it to 2";
    assert.deepEqual(versionFindings(queue({ 'x-queue-version': 1 }), v('4.3.6')), { refused: [expected], deprecated: [] });
    assert.deepEqual(versionFindings(queue({ 'x-queue-version': '1' }), v('4.3.6')).refused, [expected]);
    assert.deepEqual(versionFindings(queue({ 'x-queue-version': 2 }), v('4.3.6')), { refused: [], deprecated: [] });
  });

  it('x-queue-mode is ignored: a warning naming it', () => {
    assert.deepEqual(versionFindings(queue({ 'x-queue-mode': 'lazy' }), v('4.3.6')), {
      refused: [],
      deprecated: ["queue 'orders': RabbitMQ 4.3.6 ignores the argument x-queue-mode (classic queues keep their messages on disk since 3.12): remove it"],
    });
  });

  it('a non-durable queue that is not exclusive: deprecated; exclusive or durable: nothing', () => {
    assert.match(versionFindings(queue({}, false, false), v('4.3.6')).deprecated[0] ?? '', /^queue 'orders': RabbitMQ 4\.3\.6 deprecates non-durable queues that are not exclusive .*declare it durable, or exclusive$/);
    assert.deepEqual(versionFindings(queue({}, false, true), v('4.3.6')).deprecated, []);
    assert.deepEqual(versionFindings(queue({}, true, false), v('4.3.6')).deprecated, []);
  });

  it('global QoS: not permitted by default', () => {
    assert.deepEqual(versionFindings({ queues: [], globalQos: true }, v('4.3.6')).deprecated, ['RabbitMQ 4.3.6 does not permit global QoS by default (deprecated feature global_qos): set the prefetch per consumer']);
  });

  it('nothing before 4.3, nor when the version is unknown', () => {
    const all: BrokerRequest = { queues: [{ name: 'q', durable: false, exclusive: false, arguments: { 'x-queue-version': 1, 'x-queue-mode': 'lazy' } }], globalQos: true };
    for (const version of [v('4.0.5'), v('3.10.8'), undefined]) assert.deepEqual(versionFindings(all, version), { refused: [], deprecated: [] });
  });

  it("the package's own plan: every queue durable, never global QoS", () => {
    const request = requestOfPlan(planTopology(seedTopology));
    assert.equal(request.globalQos, false);
    assert.ok(request.queues.length > 0 && request.queues.every((q) => q.durable && !q.exclusive));
  });
});

describe('declare and check on a broker that refuses an argument: said first, nothing declared', () => {
  const config: RetryTopologyConfig = { ...seedTopology, mainQueueArguments: { 'x-queue-version': 1 } };
  const plan = planTopology(config);
  const fake = (version: string) => {
    const calls: string[] = [];
    const record = (what: string) => () => {
      calls.push(what);
      return Promise.resolve({});
    };
    const channel = {
      connection: { serverProperties: { version } },
      assertExchange: record('assertExchange'),
      assertQueue: record('assertQueue'),
      bindQueue: record('bindQueue'),
      checkExchange: record('checkExchange'),
      checkQueue: record('checkQueue'),
    } as unknown as Channel;
    const run: ChannelRunner = (work) => work(channel);
    return { run, calls };
  };
  const refusal = `queue '${seedTopology.mainQueue}': RabbitMQ 4.3.6 refuses the argument x-queue-version 1 (classic queue version 1 was removed in 4.3): remove it, or set it to 2`;

  it('declare mode on 4.3.6: the sentence, code 406, no declare at all', async () => {
    const { run, calls } = fake('4.3.6');
    await assert.rejects(declareTopology(run, plan), (err: Error & { code?: number }) => err.message === refusal && err.code === 406);
    assert.deepEqual(calls, []);
  });

  it('declare mode on 4.0.5: declared as before', async () => {
    const { run, calls } = fake('4.0.5');
    assert.deepEqual(await declareTopology(run, plan), { warnings: [] });
    assert.ok(calls.includes('assertQueue'));
  });

  it('check mode on 4.3.6: the sentence first; the inspection (the editor) carries it with the version', async () => {
    const { run, calls } = fake('4.3.6');
    // Alone: the consumer's status says the refusal, not the objects' states.
    await assert.rejects(checkTopology(run, plan), (err: Error & { objects?: unknown }) => err.message === refusal && err.objects === undefined);
    const inspection = await inspectTopology(run, plan);
    assert.equal(inspection.brokerVersion, '4.3.6');
    assert.deepEqual(inspection.refused, [refusal]);
    assert.ok(!calls.some((c) => c.startsWith('assert')), 'check mode never declares');
  });

  it('a deprecated argument on 4.3.6 is a warning of the result, the topology declared', async () => {
    const { run } = fake('4.3.6');
    const result = await declareTopology(run, planTopology({ ...seedTopology, mainQueueArguments: { 'x-queue-mode': 'lazy' } }));
    assert.deepEqual(result.warnings, [`queue '${seedTopology.mainQueue}': RabbitMQ 4.3.6 ignores the argument x-queue-mode (classic queues keep their messages on disk since 3.12): remove it`]);
  });
});
