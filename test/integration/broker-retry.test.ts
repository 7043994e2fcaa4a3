/**
 * Broker-native delayed retry (`delayedRetry: 'broker'`) on a real broker: on RabbitMQ 4.3+ a flow's
 * retries wait in the quorum main queue itself (no retry queue), each no sooner than the broker's
 * delay (min × failures, capped at max), and the last attempt is parked by the package with its
 * error; check mode compares the delayed-retry arguments. On an older broker (which would accept the
 * arguments and ignore them) the deploy is refused with the broker's version, nothing declared.
 */
import assert from 'node:assert/strict';
import { Broker, MANAGEMENT_URL, managementFetch, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { errorsOf, helper, lastStatus, loadFlow, statusTexts } from '../helpers/node-red';
import { skipBecause } from '../helpers/skips';
import { brokerRetryDelay, runsBrokerRetry } from '../../src/lib/topology';

type Msg = Record<string, any>;

async function versionOf(broker: Broker): Promise<string> {
  const ch = await broker.ch();
  return (ch as unknown as { connection: { serverProperties: { version: string } } }).connection.serverProperties.version;
}

describe('broker-native delayed retry (real broker)', function () {
  let broker: Broker;
  let names: Names;
  let version: string;

  beforeEach(async () => {
    broker = await Broker.open();
    version = await versionOf(broker);
    names = uniqueNames('native');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** consumer → work (fails every time, noting when) → retry; returns the msgs and when each arrived. */
  async function load(config: Record<string, unknown>, extra: Array<Record<string, unknown>> = []): Promise<Array<{ msg: Msg; at: number }>> {
    await loadFlow([
      tab(),
      brokerNode({ managementUrl: MANAGEMENT_URL }),
      configNode(names, { retryExchange: '', delayedRetry: 'broker', ...config }),
      consumerNode([['work']]),
      { id: 'work', type: 'function', z: 'flow', func: "msg.error = new Error('charge service down'); return msg;", wires: [['retry', 'seen']] },
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'retry', type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
      ...extra,
    ]);
    const seen: Array<{ msg: Msg; at: number }> = [];
    helper.getNode('seen').on('input', (m: Msg) => seen.push({ msg: m, at: Date.now() }));
    return seen;
  }

  describe('on RabbitMQ 4.3 or later', function () {
    beforeEach(function () {
      if (!runsBrokerRetry(version)) skipBecause(this, `broker-native delayed retry needs RabbitMQ 4.3+, the broker at AMQP_URL is ${version}`);
    });

    it('retries in the main queue, each wait no shorter than the broker delay, then parks the last attempt with its error', async () => {
      const seen = await load({ retryDelay: '400ms, 1s', maxAttempts: '4' });
      await broker.waitForConsumer(names.mainQueue);
      await broker.publish(names.mainExchange, names.routingKey, { order: 1 }, { messageId: 'native-1' });
      await waitFor(async () => (await broker.messageCount(names.parkingQueue)) === 1, 'the message parked after 4 attempts');
      assert.deepEqual(seen.map((s) => s.msg.retry.attempt), [1, 2, 3, 4]);
      // The broker counts the rejects: attempt n arrives with x-delivery-count n - 1.
      assert.deepEqual(seen.map((s) => s.msg.amqp.headers?.['x-delivery-count'] ?? 0), [0, 1, 2, 3]);
      for (let i = 1; i < seen.length; i += 1) {
        const waited = (seen[i]?.at ?? 0) - (seen[i - 1]?.at ?? 0);
        const configured = brokerRetryDelay({ minMs: 400, maxMs: 1000 }, i); // 400, 800, 1000
        // A few ms for the clocks' granularity: never noticeably sooner than the broker's delay.
        assert.ok(waited >= configured - 15, `retry ${i} waited ${waited} ms, the broker delays ${configured} ms`);
      }
      const parked = await broker.take(names.parkingQueue);
      const headers = parked.properties.headers ?? {};
      assert.equal(headers['park-reason'], 'max attempts (4) reached; last error: charge service down');
      assert.equal(headers['retry-attempt'], 4);
      assert.equal(headers['park-error-name'], 'Error');
      assert.equal(await broker.messageCount(names.mainQueue), 0, 'acked after the park was confirmed');
      assert.equal(await broker.exists('queue', names.retryQueue), false, 'no retry queue');
      const args = ((await (await managementFetch(`queues/%2F/${encodeURIComponent(names.mainQueue)}`)).json()) as { arguments: Record<string, unknown> }).arguments;
      assert.deepEqual(
        [args['x-queue-type'], args['x-delayed-retry-type'], args['x-delayed-retry-min'], args['x-delayed-retry-max'], args['x-delivery-limit']],
        ['quorum', 'failed', 400, 1000, 4],
      );
    });

    it('check mode compares the delayed-retry arguments: a different minimum is named', async () => {
      const ch = await broker.ch();
      await ch.assertExchange(names.mainExchange, 'direct', { durable: true });
      await ch.assertQueue(names.parkingQueue, { durable: true });
      await ch.assertQueue(names.mainQueue, {
        durable: true,
        arguments: { 'x-queue-type': 'quorum', 'x-delayed-retry-type': 'failed', 'x-delayed-retry-min': 500, 'x-delayed-retry-max': 1000, 'x-delivery-limit': 4, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': names.parkingQueue },
      });
      await ch.bindQueue(names.mainQueue, names.mainExchange, names.routingKey);
      await load({ mode: 'check', retryDelay: '400ms, 1s', maxAttempts: '4' });
      await waitFor(() => /x-delayed-retry-min/.test(lastStatus('consumer')?.text ?? '') || errorsOf('consumer').some((e) => e.includes('x-delayed-retry-min')), 'the difference named');
      assert.ok(errorsOf('consumer').some((e) => e.includes('x-delayed-retry-min') && e.includes('500') && e.includes('400')), errorsOf('consumer').join('\n'));
    });
  });

  describe('on a broker older than 4.3', function () {
    beforeEach(function () {
      if (runsBrokerRetry(version)) skipBecause(this, `the refusal shows on brokers older than 4.3, the broker at AMQP_URL is ${version}`);
    });

    it('refuses at deploy with the broker version, and declares nothing', async () => {
      await load({ retryDelay: '1s', maxAttempts: '3' });
      await waitFor(() => errorsOf('consumer').some((e) => e.includes('4.3')), 'the refusal logged');
      const error = errorsOf('consumer').find((e) => e.includes('4.3')) ?? '';
      assert.ok(error.includes(`RabbitMQ ${version}`), error);
      assert.ok(error.includes('broker-native delayed retry needs RabbitMQ 4.3 or later'), error);
      assert.equal(lastStatus('consumer')?.fill, 'red');
      assert.equal(await broker.exists('queue', names.mainQueue), false, 'nothing declared');
    });

    it('keeps its red status while it re-checks: no yellow `checking topology` in between (a status node sees one change, not a flap)', async () => {
      await load({ retryDelay: '1s', maxAttempts: '3' });
      await waitFor(() => lastStatus('consumer')?.fill === 'red', 'the red status');
      const shown = statusTexts('consumer').length;
      // Count the re-checks: each refused one asks the broker's version on one throwaway channel of the broker's connection.
      const connection = (helper.getNode('broker') as unknown as { connection: { withThrowawayChannel: (...args: unknown[]) => Promise<unknown> } }).connection;
      const throwaway = connection.withThrowawayChannel.bind(connection);
      let checks = 0;
      connection.withThrowawayChannel = (...args: unknown[]) => {
        checks += 1;
        return throwaway(...args);
      };
      await waitFor(() => checks >= 2, 'two re-checks (2 s, then 4 s later)');
      assert.deepEqual(statusTexts('consumer').slice(shown), [], 'no status after the red one');
      assert.equal(errorsOf('consumer').filter((e) => e.includes('4.3')).length, 1, 'the refusal logged once');
    });
  });
});
