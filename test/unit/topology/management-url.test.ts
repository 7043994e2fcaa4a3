import assert from 'node:assert/strict';
import { resolveConnectTargets } from '../../../src/lib/connection';
import { chooseManagementApi, defaultManagementUrl, managementEndpoint } from '../../../src/lib/topology';

const base = { url: '', host: '', port: 5672, vhost: '/', tls: false, heartbeat: 30 };
const target = (settings: Partial<typeof base>) => resolveConnectTargets({ ...base, ...settings })[0]!;

describe('chooseManagementApi: which management API check mode reads', () => {
  const local = target({ url: 'amqp://app:secret@rabbit.example:5672/orders' });

  it('none when the URL is empty, as before', () => {
    assert.deepEqual(chooseManagementApi('', local), { kind: 'none' });
    assert.deepEqual(chooseManagementApi('  ', local), { kind: 'none' });
  });

  it('the URL given, whatever it is (a wrong one stays an error of the broker configuration)', () => {
    assert.deepEqual(chooseManagementApi(' http://mgmt.example:15672 ', local), { kind: 'given', url: 'http://mgmt.example:15672' });
    assert.deepEqual(chooseManagementApi('not a url', local), { kind: 'given', url: 'not a url' });
  });

  it("an unset variable: the broker's own host on the default port, optional, with the note saying why", () => {
    assert.deepEqual(chooseManagementApi('${RABBITMQ_MANAGEMENT_URL}', local), {
      kind: 'default',
      url: 'http://rabbit.example:15672',
      optional: true,
      note: "management API URL ${RABBITMQ_MANAGEMENT_URL}: environment variable not set; trying the broker's own at http://rabbit.example:15672 (arguments are compared if it answers)",
    });
  });

  it('an unset variable without a broker to connect to (a configuration that cannot be used): none', () => {
    assert.deepEqual(chooseManagementApi('${RABBITMQ_MANAGEMENT_URL}', undefined), { kind: 'none' });
  });

  it('the default: http on 15672, https on 15671 with TLS, the host as the URL names it (IPv6 in brackets), never the credentials', () => {
    assert.equal(defaultManagementUrl(local), 'http://rabbit.example:15672');
    assert.equal(defaultManagementUrl(target({ host: '127.0.0.1' })), 'http://127.0.0.1:15672');
    assert.equal(defaultManagementUrl(target({ url: 'amqps://u:p@rabbit.example:5671' })), 'https://rabbit.example:15671');
    assert.equal(defaultManagementUrl(target({ url: 'amqp://[::1]:5672' })), 'http://[::1]:15672');
  });
});

describe('managementEndpoint: a management URL as fetch can use it (the package and the test helpers)', () => {
  const basic = (userPass: string): string => `Basic ${Buffer.from(userPass).toString('base64')}`;

  it('a user:password in the URL moves into the Authorization header and out of the URL', () => {
    assert.deepEqual(managementEndpoint('http://admin:s%40cret@127.0.0.1:15674/', 'guest', 'guest'), { baseUrl: 'http://127.0.0.1:15674', authorization: basic('admin:s@cret') });
  });

  it('without one, the given user and password', () => {
    assert.deepEqual(managementEndpoint(' http://127.0.0.1:15672 ', 'app', 'pw'), { baseUrl: 'http://127.0.0.1:15672', authorization: basic('app:pw') });
  });

  it('not an http(s) URL: an error that never shows the password', () => {
    assert.throws(() => managementEndpoint('amqp://u:topsecret@host:5672', 'g', 'g'), /must start with http:\/\/ or https:\/\/, not amqp:/);
    assert.throws(() => managementEndpoint('http://u:topsecret@ho st', 'g', 'g'), (err: Error) => !err.message.includes('topsecret') && /not a valid URL/.test(err.message));
  });
});
