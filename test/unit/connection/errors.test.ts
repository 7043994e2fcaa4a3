import assert from 'node:assert/strict';
import { describeConnectionError } from '../../../src/lib/connection/errors';

describe('connection errors in words', () => {
  const target = { address: 'rabbit:5672', vhost: 'payments', user: 'app' };
  const withCode = (code: string, message = code): Error => Object.assign(new Error(message), { code });
  it('names the vhost and the user when RabbitMQ closes instead of opening', () => {
    assert.equal(describeConnectionError(new Error('Expected ConnectionOpenOk; got <ConnectionClose channel:0>'), target), "vhost 'payments' not found or not allowed for user 'app'");
  });
  it('says a plain port does not speak TLS', () => {
    assert.equal(describeConnectionError(withCode('ERR_SSL_WRONG_VERSION_NUMBER', 'ssl3_get_record:wrong version number'), target), 'TLS handshake failed: rabbit:5672 does not speak TLS (amqps is usually 5671)');
  });
  it('tells an untrusted certificate from a wrong name', () => {
    assert.match(describeConnectionError(withCode('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'), target), /^TLS: the broker's certificate is not trusted .*set the CA certificate/);
    assert.match(describeConnectionError(withCode('ERR_TLS_CERT_ALTNAME_INVALID'), target), /^TLS: the broker's certificate is not valid for 'rabbit' .*server name/);
  });
  it('names the user whose login was refused, and the address nobody listens on', () => {
    assert.equal(describeConnectionError(new Error('Handshake terminated by server: 403 (ACCESS-REFUSED)'), target), "access refused for user 'app': check user and password");
    assert.equal(describeConnectionError(withCode('ECONNREFUSED'), target), 'connection refused: is RabbitMQ running at rabbit:5672?');
  });
});
