/**
 * A broken broker configuration, as a new user writes one, against the real broker: every user node
 * names the real problem (status and error), nothing is retried that cannot work, and no password is
 * ever shown — in any log line, status or msg.
 */
import assert from 'node:assert/strict';
import { AMQP_URL, Broker, MANAGEMENT_URL, uniqueName, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, declareSeedTopology, tab, uniqueNames, type Names } from '../helpers/flows';
import { errorsOf, helper, loadFlow, logLines, statusCalls, statusTexts } from '../helpers/node-red';
import { statusKey } from '../../src/nodes/shared/i18n';

type Msg = Record<string, any>;

/** In every password below: a leak of any part of one shows up as this text. */
const SECRET = 'S3cr';

describe('broker configuration problems in the Node-RED runtime (real broker)', function () {
  let broker: Broker;
  let names: Names;
  let caught: Msg[];

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('brokercfg');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /** A consumer and a publish node on one broker config; a catch node records the msgs that come with errors. */
  async function load(brokerExtra: Record<string, unknown>, credentials: Record<string, Record<string, string>> = {}, config: Record<string, unknown> = {}): Promise<void> {
    const flow = [
      tab(),
      brokerNode(brokerExtra),
      configNode(names, config),
      consumerNode([['seen']]),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'publish', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', exchange: '', routingKey: 'nowhere', wires: [[]] },
      { id: 'catch', type: 'catch', z: 'flow', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', type: 'helper', z: 'flow' },
    ];
    await loadFlow(flow, undefined, credentials);
    caught = [];
    helper.getNode('caught').on('input', (msg: Msg) => caught.push(msg));
  }

  const lastStatus = (id: string): string => statusTexts(id).at(-1) ?? '';

  /** Everything a user can see: log lines, every status text, every msg the catch node got. */
  function everythingShown(): string {
    return [...logLines(), ...statusCalls().map((c) => c.status.text ?? ''), ...caught.map((m) => JSON.stringify(m))].join('\n');
  }

  it('names an unknown vhost and the user, not amqplib\'s ConnectionOpenOk text', async () => {
    const vhost = uniqueName('no-such-vhost');
    const url = new URL(AMQP_URL);
    url.pathname = `/${vhost}`;
    await load({ url: url.toString() });
    await waitFor(() => lastStatus('consumer').includes('retry in'), 'the connection error on the consumer');
    assert.match(lastStatus('consumer'), new RegExp(`^vhost '${vhost}' not found or not allowed for user '${decodeURIComponent(url.username) || 'guest'}' \\(retry in \\d+ s\\)$`));
  });

  it('says a plain AMQP port does not speak TLS when amqps:// points at it', async () => {
    const url = new URL(AMQP_URL);
    url.protocol = 'amqps:';
    await load({ url: url.toString() });
    await waitFor(() => lastStatus('consumer').includes('retry in'), 'the connection error on the consumer');
    assert.match(lastStatus('consumer'), new RegExp(`^TLS handshake failed: ${url.hostname}:${url.port || 5672} does not speak TLS \\(amqps is usually 5671\\)`));
  });

  it('shows an unusable configuration on every user node and as an error, and never retries it', async () => {
    await load({ url: '${CONN7_NOT_SET_ANYWHERE}', host: '' });
    const expected = 'environment variable CONN7_NOT_SET_ANYWHERE is not set and no host is given';
    await waitFor(() => lastStatus('consumer') === expected && lastStatus('publish') === expected, 'the problem on both user nodes');
    const reported = (id: string): boolean => errorsOf(id).some((e) => e.includes(expected));
    await waitFor(() => reported('consumer') && reported('publish'), 'the problem as an error of both user nodes');
    const phase = (helper.getNode('broker') as unknown as { connection: { state: { phase: string } } }).connection.state.phase;
    assert.equal(phase, 'invalid');
    assert.ok(!statusCalls().some((c) => /connecting|retry in/.test(String(c.status.text))), 'nothing may try to connect');
  });

  describe('URL and host from an environment variable (typedInput type env)', () => {
    const VAR = 'RR_TEST_ENV_AMQP_URL';
    before(() => {
      process.env.RR_TEST_ENV_AMQP_URL = AMQP_URL;
    });
    after(() => {
      delete process.env.RR_TEST_ENV_AMQP_URL;
    });

    it('connects with the URL of a process env variable', async () => {
      await load({ url: VAR, urlType: 'env', host: '' });
      await waitFor(() => /in flight/.test(lastStatus('consumer')), 'the consumer consuming through the env URL');
    });

    it("connects with the URL of the flow's env (the broker node on that flow)", async () => {
      await loadFlow([
        { ...tab(), env: [{ name: 'RR_FLOW_AMQP_URL', value: AMQP_URL, type: 'str' }] },
        brokerNode({ z: 'flow', url: 'RR_FLOW_AMQP_URL', urlType: 'env', host: '' }),
        configNode(names, { z: 'flow' }),
        consumerNode([[]]),
      ]);
      await waitFor(() => /in flight/.test(lastStatus('consumer')), `the consumer consuming through the flow env URL (${lastStatus('consumer')})`);
    });

    it('says which variable is not set, as a red status and an error, and does not connect', async () => {
      await load({ url: 'RR_ENV_NOT_SET_ANYWHERE', urlType: 'env', host: '' });
      const expected = 'environment variable RR_ENV_NOT_SET_ANYWHERE is not set and no host is given';
      await waitFor(() => lastStatus('consumer') === expected && errorsOf('consumer').some((e) => e.includes(expected)), 'the problem on the consumer');
      assert.ok(statusCalls().some((c) => c.status.fill === 'red' && c.status.text === expected));
      await helper.unload();
      await load({ url: '', host: 'RR_HOST_NOT_SET_ANYWHERE', hostType: 'env' });
      await waitFor(() => lastStatus('consumer') === 'broker host: environment variable RR_HOST_NOT_SET_ANYWHERE is not set', 'the host problem');
      assert.ok(!statusCalls().some((c) => /connecting|retry in/.test(String(c.status.text))), 'nothing may try to connect');
    });
  });

  it('refuses a TLS configuration whose files cannot be read, naming it, instead of connecting without them', async () => {
    const url = new URL(AMQP_URL);
    url.protocol = 'amqps:';
    await loadFlow([
      tab(),
      brokerNode({ url: url.toString(), tlsConfig: 'tls' }),
      { id: 'tls', type: 'tls-config', name: 'private CA', cert: '', key: '', ca: '/nonexistent/ca.pem', verifyservercert: true },
      configNode(names),
      consumerNode([[]]),
    ]);
    const expected = "TLS configuration 'private CA' cannot be used: its certificate, key or CA file could not be read (see the log)";
    await waitFor(() => lastStatus('consumer') === expected, `the refusal on the consumer (status: ${lastStatus('consumer')})`);
  });

  it('connects to the first of several URLs that answers, and names each that did not', async () => {
    const live = new URL(AMQP_URL);
    await load({ url: `amqp://guest:guest@127.0.0.1:1, ${AMQP_URL}` });
    await waitFor(() => /in flight/.test(lastStatus('consumer')), 'the consumer consuming through the second URL');
    const connection = (helper.getNode('broker') as unknown as { connection: { state: { address?: string } } }).connection;
    assert.equal(connection.state.address, `${live.hostname}:${live.port || 5672}`);
    await helper.unload();
    await load({ url: 'amqp://127.0.0.1:1, amqp://127.0.0.1:2' });
    await waitFor(() => lastStatus('consumer').includes('retry in'), 'the connection error on the consumer');
    assert.match(lastStatus('consumer'), /^127\.0\.0\.1:1: connection refused: is RabbitMQ running at 127\.0\.0\.1:1\?; 127\.0\.0\.1:2: connection refused: .* \(retry in \d+ s\)$/);
  });

  // Every shape of URL a user may type with a password in it; each must work or fail without showing it.
  const host = new URL(AMQP_URL).host;
  const shapes: Array<[string, Record<string, unknown>, Record<string, Record<string, string>>?]> = [
    ['an unencoded / in the password', { url: `amqp://u:${SECRET}/et@${host}/vhost` }],
    ['an unencoded @ in the password', { url: `amqp://u:${SECRET}@et@${host}` }],
    ['an unencoded : in the password', { url: `amqp://u:${SECRET}:et@${host}` }],
    ['an unencoded ? in the password', { url: `amqp://u:${SECRET}?et@${host}` }],
    ['an unencoded # in the password', { url: `amqp://u:${SECRET}#et@${host}` }],
    ['a percent-encoded password', { url: `amqp://u:${SECRET}%2Fet@${host}/%2F` }],
    ['user:password and no host', { url: `amqp://u:${SECRET}et` }],
    ['several URLs', { url: `amqp://u:${SECRET}/et@${host}, amqp://u:${SECRET}/et@${host}` }],
    ['the password in the credentials', { url: '' , host: new URL(AMQP_URL).hostname, port: new URL(AMQP_URL).port || '5672' }, { broker: { user: 'u', password: `${SECRET}/et@:` } }],
    ['the password in the management URL', { managementUrl: `http://guest:${SECRET}/et@127.0.0.1:15672` }],
    ['a URL from an environment variable', { url: 'RR_TEST_SECRET_URL', urlType: 'env' }],
  ];
  before(() => {
    process.env.RR_TEST_SECRET_URL = `amqp://u:${SECRET}/et@${host}`;
  });
  after(() => {
    delete process.env.RR_TEST_SECRET_URL;
  });
  for (const [shape, extra, credentials] of shapes) {
    it(`never shows a password with ${shape}`, async () => {
      await load(extra, credentials);
      await waitFor(() => statusTexts('consumer').some((t) => t !== '' && t !== statusKey('retry-broker.status.connecting')), 'a status on the consumer');
      await waitFor(() => /access refused|not a valid URL|not usable/.test(everythingShown()), 'the problem named');
      const shown = everythingShown();
      assert.ok(!shown.includes(SECRET) && !shown.includes(encodeURIComponent(SECRET)), `password shown:\n${shown}`);
    });
  }

  describe('management API URL with credentials', () => {
    const withUserInfo = (user: string, password: string): string => {
      const url = new URL(MANAGEMENT_URL);
      url.username = encodeURIComponent(user);
      url.password = encodeURIComponent(password);
      return url.toString();
    };

    it('uses them as the Basic credentials: check mode compares arguments', async () => {
      await declareSeedTopology(await broker.ch(), names);
      const amqp = new URL(AMQP_URL);
      await load({ managementUrl: withUserInfo(decodeURIComponent(amqp.username) || 'guest', decodeURIComponent(amqp.password) || 'guest') }, {}, { mode: 'check', retryDelay: '9000' });
      await waitFor(() => errorsOf('consumer').length > 0, 'the mismatch error');
      assert.equal(errorsOf('consumer')[0], `queue '${names.retryQueue}': x-message-ttl is 500 on the broker, config says 9000 (a queue's arguments cannot be changed: move its messages elsewhere, delete '${names.retryQueue}' and redeploy, or use another queue name; see "Mismatches" in the topology guide)`);
    });

    it('reports wrong ones as refused, without showing them', async () => {
      await declareSeedTopology(await broker.ch(), names);
      await load({ managementUrl: withUserInfo('guest', `${SECRET}-wrong`) }, {}, { mode: 'check' });
      await waitFor(() => errorsOf('consumer').length > 0, 'the management API error');
      assert.match(errorsOf('consumer')[0]!, /refused the credentials \(401\)/);
      assert.ok(!everythingShown().includes(SECRET), everythingShown());
    });
  });
});
