/**
 * The Redis store's errors in one wording (issue 28): the same outage reads the same whether the
 * process saw the connection's error, a command refused offline or a command cut off in flight —
 * the client's own texts (ioredis 5) as they come.
 */
import assert from 'node:assert/strict';
import { redisStoreError } from '../../../src/lib/dedupe';

const STORE = 'redis 127.0.0.1:6391';

function coded(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

const REFUSED = coded('connect ECONNREFUSED 127.0.0.1:6391', 'ECONNREFUSED');
const OFFLINE = new Error("Stream isn't writeable and enableOfflineQueue options is false");
const CLOSED = new Error('Connection is closed.');
const CUT_OFF = Object.assign(new Error('Reached the max retries per request limit (which is 0). Refer to "maxRetriesPerRequest" option for details.'), { name: 'MaxRetriesPerRequestError' });

describe('Redis store errors in one wording', () => {
  it('one outage, three client texts, one sentence', () => {
    const seen = [redisStoreError(STORE, REFUSED), redisStoreError(STORE, OFFLINE, REFUSED), redisStoreError(STORE, CUT_OFF, REFUSED), redisStoreError(STORE, CLOSED, REFUSED)];
    for (const err of seen) {
      assert.equal(err.message, 'redis 127.0.0.1:6391 cannot be reached (connection refused)');
      assert.equal(err.problem, 'unreachable');
    }
  });

  it('a command cut off before the connection said why: connection lost, never the client text', () => {
    for (const err of [CUT_OFF, OFFLINE, CLOSED, coded('read ECONNRESET', 'ECONNRESET'), coded('write EPIPE', 'EPIPE')]) {
      const mapped = redisStoreError(STORE, err);
      assert.equal(mapped.message, 'redis 127.0.0.1:6391 cannot be reached (connection lost)', err.message);
      assert.equal(mapped.problem, 'unreachable');
    }
  });

  it('each way of not reaching it, in a few words', () => {
    const cases: Array<[Error, string]> = [
      [coded('getaddrinfo ENOTFOUND redis.internal', 'ENOTFOUND'), 'host not found'],
      [coded('getaddrinfo EAI_AGAIN redis.internal', 'EAI_AGAIN'), 'host not found'],
      [coded('connect EHOSTUNREACH 10.0.0.9:6379', 'EHOSTUNREACH'), 'host unreachable'],
      [coded('connect ETIMEDOUT', 'ETIMEDOUT'), 'no answer in time'],
      [new Error('Command timed out'), 'no answer in time'],
      [new Error('LOADING Redis is loading the dataset in memory'), 'loading its data after a restart'],
    ];
    for (const [err, why] of cases) assert.equal(redisStoreError(STORE, err).message, `${STORE} cannot be reached (${why})`);
  });

  it('a refused login names the server, asks for the user and password; anything else keeps the server text', () => {
    const auth = redisStoreError(STORE, new Error('WRONGPASS invalid username-password pair or user is disabled.'));
    assert.equal(auth.problem, 'auth');
    assert.match(auth.message, /^redis 127\.0\.0\.1:6391 refused the login: .* \(check the user and the password\)$/);
    const other = redisStoreError(STORE, new Error('ERR unknown command'));
    assert.equal(other.problem, 'other');
    assert.equal(other.message, 'redis 127.0.0.1:6391: ERR unknown command');
    assert.equal(redisStoreError(STORE, 'a string').message, 'redis 127.0.0.1:6391: a string');
  });

  it('a command refused offline after a refused login says the login', () => {
    const login = new Error('NOAUTH Authentication required.');
    assert.equal(redisStoreError(STORE, OFFLINE, login).problem, 'auth');
  });

  it("Sentinel and Cluster: the client's summary in a few words, a master name the sentinels do not know said as such", () => {
    const sentinel = 'redis sentinel mymaster (10.0.0.5:26379)';
    const cases: Array<[string, Error, string]> = [
      [sentinel, new Error('All sentinels are unreachable. Retrying from scratch after 500ms. Last error: connect ECONNREFUSED 10.0.0.5:26379'), `${sentinel} cannot be reached (no sentinel answers)`],
      ['redis cluster n1:6379', new Error('None of startup nodes is available'), 'redis cluster n1:6379 cannot be reached (no cluster node answers)'],
      ['redis cluster n1:6379', new Error('Failed to refresh slots cache.'), 'redis cluster n1:6379 cannot be reached (no cluster node answers)'],
      ['redis cluster n1:6379', new Error('CLUSTERDOWN The cluster is down'), 'redis cluster n1:6379 cannot be reached (the cluster is down)'],
    ];
    for (const [store, err, text] of cases) {
      const mapped = redisStoreError(store, err);
      assert.equal(mapped.message, text);
      assert.equal(mapped.problem, 'unreachable');
    }
    const unknown = redisStoreError(sentinel, new Error('All sentinels are unreachable. Retrying from scratch after 500ms. Last error: ERR No such master with that name'));
    assert.equal(unknown.message, `${sentinel}: the sentinels know no master of that name (check the name after the hosts in the URL)`);
    assert.equal(unknown.problem, 'other');
  });
});
