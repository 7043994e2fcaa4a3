/**
 * The main exchange's alternate exchange on the real broker: unroutable messages from any producer
 * land in the unrouted queue; declare and check mode report a main exchange without it.
 */
import assert from 'node:assert/strict';
import { Broker, management, MANAGEMENT_URL, vhostPath, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { helper, loadFlow } from '../helpers/node-red';

describe('alternate exchange for unrouted messages (real broker)', function () {
  let broker: Broker;
  let names: Names;
  let ae: string;
  let unrouted: string;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('ae');
    ae = `${names.mainExchange}.ae`;
    unrouted = `${names.mainExchange}.unrouted`;
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue, unrouted);
    broker.track('exchange', names.mainExchange, names.retryExchange, ae);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  async function load(config: Record<string, unknown>, brokerExtra: Record<string, unknown> = {}): Promise<unknown[]> {
    await loadFlow([tab(), brokerNode(brokerExtra), configNode(names, { alternateExchange: ae, ...config }), consumerNode([['ack']]), { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] }]);
    const errors: unknown[] = [];
    helper.getNode('consumer').on('call:error', (call: { args: unknown[] }) => errors.push(call.args[0]));
    return errors;
  }

  it('declare mode: a message nothing routes, from a producer that is not this package, waits in the unrouted queue', async () => {
    await load({ mode: 'declare' });
    await broker.waitForConsumer(names.mainQueue);
    const exchange = (await (await management('GET', `exchanges/${vhostPath()}/${encodeURIComponent(names.mainExchange)}`)).json()) as { arguments: Record<string, unknown> };
    assert.deepEqual(exchange.arguments, { 'alternate-exchange': ae });
    // Plain amqplib, no mandatory flag: without the alternate exchange the broker would drop it.
    await broker.publish(names.mainExchange, 'nobody.binds.this', { lost: false }, { messageId: 'stray' });
    const stray = await broker.take(unrouted);
    assert.equal(stray.properties.messageId, 'stray');
    assert.equal(stray.fields.routingKey, 'nobody.binds.this');
    assert.equal(await broker.messageCount(names.mainQueue), 0);
  });

  it('declare mode reports an existing main exchange without the alternate exchange, never changes it', async () => {
    await (await broker.ch()).assertExchange(names.mainExchange, 'direct', { durable: true });
    const errors = await load({ mode: 'declare' });
    await waitFor(() => errors.length > 0, 'the mismatch error');
    assert.match(String(errors[0]), new RegExp(`^exchange '${names.mainExchange}': alternate-exchange is none on the broker, config says '${ae}'`));
  });

  it('check mode with the management API reports a main exchange without it, and accepts one with it', async () => {
    const ch = await broker.ch();
    await ch.assertExchange(names.mainExchange, 'direct', { durable: true });
    await ch.assertExchange(names.retryExchange, 'fanout', { durable: true });
    await ch.assertExchange(ae, 'fanout', { durable: true });
    const errors = await load({ mode: 'check', retryExchange: '' }, { managementUrl: MANAGEMENT_URL });
    await waitFor(() => errors.length > 0, 'the check error');
    assert.match(String(errors[0]), new RegExp(`exchange '${names.mainExchange}': alternate-exchange is none on the broker, config says '${ae}'`));
    assert.equal(await broker.exists('exchange', ae), true);
    await helper.unload();
    // The same check against a topology declared with it passes: the consumer starts.
    await ch.deleteExchange(names.mainExchange);
    await load({ mode: 'declare', retryExchange: '' });
    await broker.waitForConsumer(names.mainQueue);
    await helper.unload();
    const again = await load({ mode: 'check', retryExchange: '' }, { managementUrl: MANAGEMENT_URL });
    await broker.waitForConsumer(names.mainQueue);
    assert.deepEqual(again, []);
  });
});
