import assert from 'node:assert/strict';
import { BROKER_NUMBERS, brokerProperties } from '../../../../src/nodes/shared/broker-properties';

describe('retry-broker properties (shared)', function () {
  it('a node saved before the publish buffer existed (version 1): its numbers at their fallbacks, the local host, vhost /', function () {
    assert.deepEqual(brokerProperties({ host: 'localhost', port: '5672' }), {
      name: '',
      url: '',
      host: 'localhost',
      vhost: '/',
      tls: false,
      tlsConfig: '',
      managementUrl: '',
      numbers: { port: 5672, heartbeat: 30, reconnectMax: 5, bufferMessages: BROKER_NUMBERS.bufferMessages.fallback, bufferMiB: BROKER_NUMBERS.bufferMiB.fallback },
      problems: [],
    });
    assert.equal(brokerProperties({}).host, '127.0.0.1');
  });

  it('a tls-config node means TLS for the host fields', function () {
    assert.equal(brokerProperties({ tlsConfig: 't1' }).tls, true);
    assert.equal(brokerProperties({ tls: true }).tls, true);
    assert.equal(brokerProperties({ tls: 'yes' }).tls, false);
  });

  it('reads URL, management URL and name as set; a bad number is a problem and reads as its fallback', function () {
    const read = brokerProperties({ name: 'main', url: ' amqp://a,amqp://b ', managementUrl: 'http://a:15672', heartbeat: '-1', bufferMiB: '2' });
    assert.deepEqual([read.name, read.url, read.managementUrl, read.numbers.bufferMiB], ['main', 'amqp://a,amqp://b', 'http://a:15672', 2]);
    assert.equal(read.numbers.heartbeat, BROKER_NUMBERS.heartbeat.fallback);
    assert.equal(read.problems.length, 1);
    assert.match(read.problems[0] ?? '', /heartbeat/);
  });
});
