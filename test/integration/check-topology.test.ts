/**
 * The retry-config dialog's check endpoint on the real broker: passive checks of the posted
 * (unsaved) values, with the broker's stored password when the editor sends it unchanged.
 */
import assert from 'node:assert/strict';
import { MGMT_ELSEWHERE, skipBecause } from '../helpers/skips';
import { AMQP_URL, Broker, MANAGEMENT_URL, uniqueName } from '../helpers/broker';
import { helper, packageNodes } from '../helpers/node-red';

const amqp = new URL(AMQP_URL);
const user = decodeURIComponent(amqp.username || 'guest');
const password = decodeURIComponent(amqp.password || 'guest');
/** The broker as the editor knows it: no URL, so the stored credentials are the only ones. */
const brokerValues = {
  id: 'broker',
  name: uniqueName('check-broker'),
  url: '',
  host: amqp.hostname,
  port: amqp.port || '5672',
  vhost: decodeURIComponent(amqp.pathname.slice(1)) || '/',
  tls: false,
  heartbeat: '30',
  reconnectMax: '30',
  managementUrl: '',
};

interface CheckAnswer {
  broker?: string;
  error?: string;
  compared?: boolean;
  objects?: { kind: string; name: string; state: string; differences: { argument: string; broker: unknown; config: unknown }[] }[];
}

describe('check-topology endpoint (real broker, stored credentials)', function () {
  let broker: Broker;
  const names = { main: uniqueName('check-main'), retry: uniqueName('check-retry'), parking: uniqueName('check-parking') };
  const config = { mode: 'check', mainQueue: names.main, retryQueue: names.retry, parkingQueue: names.parking, retryDelay: '1000', maxAttempts: '3' };

  async function post(body: unknown): Promise<{ status: number; answer: CheckAnswer; text: string }> {
    const response = await helper.request().post('/rabbitmq-retry/check-topology').send(body);
    const text = response.text;
    return { status: response.status, answer: JSON.parse(text) as CheckAnswer, text };
  }

  before(async function () {
    broker = await Broker.open();
    broker.track('queue', names.main, names.retry, names.parking);
    const ch = await broker.ch();
    await ch.assertQueue(names.main, { durable: true, arguments: { 'x-dead-letter-exchange': 'elsewhere' } });
    await ch.assertQueue(names.parking, { durable: true });
  });

  after(async function () {
    await helper.unload();
    await broker.cleanup();
  });

  // The deployed broker node with its stored credentials (the test helper's third argument).
  beforeEach(async function () {
    await helper.load(packageNodes, [{ ...brokerValues, type: 'retry-broker' }], { broker: { user, password } });
  });

  afterEach(async function () {
    await helper.unload();
  });

  it('connects with the stored password when the editor sends it unchanged, and reports each object', async function () {
    const { status, answer, text } = await post({ config, broker: brokerValues, credentials: { user, password: '__PWRD__' } });
    assert.equal(status, 200, text);
    assert.equal(answer.compared, false);
    const state = Object.fromEntries((answer.objects ?? []).map((o) => [o.name, o.state]));
    assert.deepEqual(state, { [names.main]: 'ok', [names.retry]: 'missing', [names.parking]: 'ok' });
    assert.ok(!text.includes(`:${password}@`), 'the answer shows the password');
  });

  it('compares arguments through the management API of unsaved broker values: expected vs actual', async function () {
    const { status, answer, text } = await post({ config, broker: { ...brokerValues, managementUrl: MANAGEMENT_URL }, credentials: { password: '__PWRD__' } });
    assert.equal(status, 200, text);
    assert.equal(answer.compared, true);
    const main = answer.objects?.find((o) => o.name === names.main);
    assert.equal(main?.state, 'differs');
    assert.deepEqual(main?.differences.find((d) => d.argument === 'x-dead-letter-exchange'), { argument: 'x-dead-letter-exchange', broker: 'elsewhere', config: '' });
  });

  it("with the management URL's variable unset, compares through the API at the broker's host (an imported example)", async function () {
    // The default is port 15672 of the broker's host: a broker whose API is elsewhere (RabbitMQ 4 beside the host's) cannot show it.
    if (new URL(MANAGEMENT_URL).origin !== `http://${amqp.hostname}:15672`) skipBecause(this, MGMT_ELSEWHERE);
    const { status, answer, text } = await post({ config, broker: { ...brokerValues, managementUrl: '${RR_CHECK_MGMT_NOT_SET_ANYWHERE}' }, credentials: { password: '__PWRD__' } });
    assert.equal(status, 200, text);
    assert.equal(answer.compared, true);
    assert.equal(answer.objects?.find((o) => o.name === names.main)?.state, 'differs');
  });

  it('uses a password typed in the dialog instead of the stored one', async function () {
    const { status, answer, text } = await post({ config, broker: brokerValues, credentials: { user, password: `${password}-wrong` } });
    assert.equal(status, 502, text);
    assert.match(String(answer.error), /ACCESS_REFUSED|403|auth|refused|Handshake/i);
    assert.ok(!text.includes(`${password}-wrong`), 'the answer shows the password');
  });

  it('answers 400 with the problems of an invalid configuration, without connecting', async function () {
    const { status, answer } = await post({ config: { ...config, maxAttempts: '0' }, broker: brokerValues, credentials: {} });
    assert.equal(status, 400);
    assert.match(String(answer.error), /max attempts/);
  });
});
