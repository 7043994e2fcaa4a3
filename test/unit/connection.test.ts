import assert from 'node:assert/strict';
import { backoffDelay } from '../../src/lib/backoff';
import { isUnresolvedEnv, resolveConnectTarget, type BrokerSettings } from '../../src/lib/connection-settings';

describe('reconnect backoff', () => {
  const options = { initialMs: 1000, maxMs: 30_000, jitter: 0 };
  it('doubles from the initial delay up to the cap', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n, options)), [1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });
  it('spreads delays by the jitter, never past the cap', () => {
    assert.equal(backoffDelay(1, { ...options, jitter: 0.5 }, () => 0), 500);
    assert.equal(backoffDelay(1, { ...options, jitter: 0.5 }, () => 1), 1500);
    assert.equal(backoffDelay(10, { ...options, jitter: 0.5 }, () => 1), 30000);
  });
});

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
});
