import assert from 'node:assert/strict';
import { isUnresolvedEnv, redactUrl, resolveConnectTargets, resolveEnvFields, type BrokerSettings } from '../../../src/lib/connection/settings';
import { ManagementApi } from '../../../src/lib/topology/management-api';

const resolveConnectTarget = (settings: BrokerSettings) => resolveConnectTargets(settings)[0]!;

describe('connect target', () => {
  const base: BrokerSettings = { url: '', host: '127.0.0.1', port: 5672, vhost: '/', tls: false, heartbeat: 30 };

  it('builds a URL from host, port and vhost with the credentials', () => {
    const t = resolveConnectTarget({ ...base, vhost: 'pay/ments', username: 'app', password: 's3cr:t@' });
    assert.equal(t.url, 'amqp://app:s3cr%3At%40@127.0.0.1:5672/pay%2Fments?heartbeat=30');
    assert.equal(t.display, 'amqp://app@127.0.0.1:5672/pay%2Fments');
  });

  it('treats an unresolved ${VAR} as unset and falls back to the host', () => {
    assert.equal(isUnresolvedEnv('${AMQP_URL}'), true);
    assert.equal(resolveConnectTarget({ ...base, url: '${AMQP_URL}' }).url, 'amqp://127.0.0.1:5672?heartbeat=30');
  });

  it('lets credentials in the URL win over the credential fields', () => {
    const t = resolveConnectTarget({ ...base, url: 'amqp://guest:guest@rabbit:5673/v', username: 'other', password: 'x' });
    assert.equal(t.url, 'amqp://guest:guest@rabbit:5673/v?heartbeat=30');
    assert.equal(t.display, 'amqp://guest@rabbit:5673/v');
  });

  it('refuses URLs that are not AMQP', () => {
    assert.throws(() => resolveConnectTarget({ ...base, url: 'http://x' }), /must start with amqp/);
    assert.throws(() => resolveConnectTarget({ ...base, url: 'amqp://u:p@[bad' }), /not a valid URL/);
  });

  it('takes several URLs or hosts: the nodes of a cluster, in order', () => {
    const urls = resolveConnectTargets({ ...base, url: 'amqp://a:b@n1:5681, amqp://a:b@n2:5682\namqps://a:b@n3' });
    assert.deepEqual(urls.map((t) => t.address), ['n1:5681', 'n2:5682', 'n3:5671']);
    assert.deepEqual(urls.map((t) => t.tls), [false, false, true]);
    const hosts = resolveConnectTargets({ ...base, host: 'n1:5681, n2 ,[::1]:5683', vhost: 'v', username: 'app', password: 'pw' });
    assert.deepEqual(hosts.map((t) => t.url), ['amqp://app:pw@n1:5681/v?heartbeat=30', 'amqp://app:pw@n2:5672/v?heartbeat=30', 'amqp://app:pw@[::1]:5683/v?heartbeat=30']);
    assert.deepEqual(hosts.map((t) => [t.vhost, t.user]), [['v', 'app'], ['v', 'app'], ['v', 'app']]);
    assert.throws(() => resolveConnectTargets({ ...base, host: 'n1:5681/x' }), /is not a host name or host:port/);
  });

  it('names an environment variable that is not set when nothing else says where to connect', () => {
    assert.throws(() => resolveConnectTargets({ ...base, url: '${AMQP_URL}', host: '' }), /^Error: environment variable AMQP_URL is not set and no host is given$/);
    assert.throws(() => resolveConnectTargets({ ...base, url: 'amqp://${RMQ_HOST}:5672' }), /environment variable RMQ_HOST is not set/);
  });
});

describe('broker fields from the environment (typedInput type env)', () => {
  const env: Record<string, string> = { AMQP_URL: 'amqp://u:p@rabbit:5672/', MQ_HOST: ' mq1, mq2 ', EMPTY: '' };
  const lookup = (name: string): string => env[name] ?? '';
  it('reads an env field by its variable name, and `${NAME}` text as Node-RED does at deploy', () => {
    const def = { url: 'AMQP_URL', urlType: 'env', host: '${MQ_HOST}', managementUrl: 'http://x:15672', managementUrlType: 'str', port: 5672 };
    assert.deepEqual(resolveEnvFields(def, lookup), { ...def, url: 'amqp://u:p@rabbit:5672/', host: 'mq1, mq2' });
    assert.equal(resolveEnvFields({ url: '${AMQP_URL}', urlType: 'env' }, lookup).url, 'amqp://u:p@rabbit:5672/');
  });
  it('keeps text fields and flows saved before the type existed as they are', () => {
    const def = { url: 'amqp://h', host: 'MQ_HOST', managementUrl: '' };
    assert.deepEqual(resolveEnvFields(def, lookup), def);
  });
  it('turns an unset or empty variable into the unset reference the settings report', () => {
    const out = resolveEnvFields({ url: 'NOT_SET', urlType: 'env', host: 'EMPTY', hostType: 'env', managementUrl: 'NOPE', managementUrlType: 'env' }, lookup);
    assert.deepEqual([out.url, out.host, out.managementUrl], ['${NOT_SET}', '${EMPTY}', '${NOPE}']);
    const settings = { url: String(out.url), host: '', port: 5672, vhost: '/', tls: false, heartbeat: 30 };
    assert.throws(() => resolveConnectTargets(settings), /^Error: environment variable NOT_SET is not set and no host is given$/);
    assert.throws(() => resolveConnectTargets({ ...settings, host: String(out.host) }), /^Error: broker host: environment variable EMPTY is not set$/);
  });
});

describe('password redaction', () => {
  const base: BrokerSettings = { url: '', host: '127.0.0.1', port: 5672, vhost: '/', tls: false, heartbeat: 30 };
  // Each holds the password S3cr...; whatever the shape, no part of it may be shown.
  const shapes = [
    'amqp://u:S3cr/et@host/vhost',
    'amqp://u:S3cr@et@host',
    'amqp://u:S3cr?et@host',
    'amqp://u:S3cr#et@host/v',
    'amqp://u:S3cret@[bad',
    'amqp://u:S3cret',
    'amqp://u:S3cret/vhost',
    'amqps://u:S3cr et@host',
    'amqp://u/x:S3cret@host',
    'u:S3cret@host',
    'AMQP://U:S3cr/et@HOST',
  ];
  for (const raw of shapes) {
    it(`hides the password of ${raw.replace('S3cr', '<pw>')}`, () => {
      assert.ok(!redactUrl(raw).includes('S3cr'), redactUrl(raw));
      let message: string;
      try {
        message = JSON.stringify(resolveConnectTargets({ ...base, url: raw }).map((t) => ({ ...t, url: undefined })));
      } catch (err) {
        message = (err as Error).message;
      }
      assert.ok(!message.includes('S3cr'), message);
    });
  }
  it('keeps what helps: scheme, user, host, port', () => {
    assert.equal(redactUrl('amqp://u:S3cr/et@host:5672/vhost'), 'amqp://u:***@host:5672/vhost');
    assert.equal(redactUrl('amqp://host:5672/v'), 'amqp://host:5672/v');
    assert.equal(redactUrl('redis+sentinel://s1:26379,s2:26380/mymaster'), 'redis+sentinel://s1:26379,s2:26380/mymaster');
    assert.equal(redactUrl('redis+cluster://[::1]:7000,n2'), 'redis+cluster://[::1]:7000,n2');
    assert.equal(redactUrl('redis+cluster://n1:7000,user:S3cr'), 'redis+cluster://n1:***');
    assert.equal(redactUrl('amqp://u:S3cret/v'), 'amqp://u:***/v');
  });

  it('sends a management URL\'s credentials as a Basic header and never shows them', () => {
    const api = new ManagementApi({ baseUrl: 'http://admin:S3cr%2Fet@127.0.0.1:15672/', vhost: '/', username: 'guest', password: 'guest' });
    assert.equal(api.baseUrl, 'http://127.0.0.1:15672');
    assert.throws(
      () => new ManagementApi({ baseUrl: 'http://admin:S3cr/et@127.0.0.1:15672', vhost: '/', username: 'guest', password: 'guest' }),
      (err: Error) => /management API URL 'http:\/\/admin:\*\*\*@127.0.0.1:15672' is not a valid URL/.test(err.message) && !err.message.includes('S3cr'),
    );
  });
});
