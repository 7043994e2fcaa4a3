/**
 * Issue 52: the exchanges the old flow declared and the converted one only checks or publishes to are
 * named in the report, each with the one command that creates it.
 */
import assert from 'node:assert/strict';
import { convertFlows, reportText, type FlowNode } from '../../../src/migrate';
import { createCommand, exchangesToCreate } from '../../../src/migrate/exchanges';

const at = { z: 'tab', x: 100, y: 100 };
const broker: FlowNode = { id: 'b', type: 'amqp-broker', host: 'mq.example', port: 5672, vhost: 'shop', tls: false };
const mwIn = (extra: Record<string, unknown>): FlowNode => ({ id: 'in', type: 'amqp-in', ...at, broker: 'b', prefetch: 1, noAck: true, exchangeName: 'orders', exchangeType: 'topic', exchangeDurable: true, exchangeRoutingKey: 'o.*', queueName: 'orders', wires: [[]], ...extra });
const mwOut = (extra: Record<string, unknown>): FlowNode => ({ id: 'out', type: 'amqp-out', ...at, broker: 'b', exchangeName: 'orders', exchangeType: 'topic', exchangeDurable: true, exchangeRoutingKey: 'o.new', exchangeRoutingKeyType: 'str', outputs: 0, wires: [], ...extra });
const server: FlowNode = { id: 's', type: 'amqp-server', host: 'rabbit', port: '5672', vhost: '' };

describe('exchanges to create (issue 52)', function () {
  it('one per exchange the old consumers and publishers declared, with the broker\'s host and vhost', function () {
    const r = convertFlows([broker, mwIn({}), mwOut({}), mwOut({ id: 'out2', exchangeName: 'events', exchangeType: 'fanout', exchangeDurable: false })]);
    assert.deepEqual(r.exchanges, [
      { name: 'orders', type: 'topic', durable: true, host: 'mq.example', vhost: 'shop', nodes: ['in', 'out'] },
      { name: 'events', type: 'fanout', durable: false, host: 'mq.example', vhost: 'shop', nodes: ['out2'] },
    ]);
    const text = reportText(r);
    assert.match(text, /create +exchange 'orders' \(topic\) before deploying, check mode never does: curl /);
    assert.match(text, /create +exchange 'events' \(fanout, was not durable\)/);
    assert.match(text, /2 exchange\(s\) to create$/);
  });

  it('abreits\' exchanges too (consumer and publisher); none for a queue, the default exchange, amq.* or a kept node', function () {
    const abIn: FlowNode = { id: 'ai', type: 'amqp in', ...at, iotype: '3', ioname: 'events', server: 's', wires: [[]] };
    const abOut: FlowNode = { id: 'ao', type: 'amqp out', ...at, iotype: '1', ioname: 'fan', server: 's', wires: [] };
    const toQueue: FlowNode = { id: 'aq', type: 'amqp out', ...at, iotype: '4', ioname: 'orders', server: 's', wires: [] };
    const r = convertFlows([server, abIn, abOut, toQueue]);
    assert.deepEqual(r.exchanges.map((e) => [e.name, e.type, e.host, e.vhost]), [['events', 'topic', 'rabbit', '/'], ['fan', 'fanout', 'rabbit', '/']]);
    const none = convertFlows([broker, mwIn({ exchangeName: '' }), mwOut({ exchangeName: 'amq.topic' }), mwIn({ id: 'h', exchangeType: 'headers', exchangeName: 'hx' })]);
    assert.deepEqual(none.exchanges, []);
    assert.doesNotMatch(reportText(none), /exchange\(s\) to create/);
  });

  it('the command: a PUT of a durable exchange to the management API, names and vhost encoded', function () {
    assert.equal(
      createCommand({ name: "it's a/b", type: 'direct', durable: false, host: 'mq', vhost: '/', nodes: [] }),
      `curl -u USER:PASSWORD -X PUT -H 'content-type: application/json' -d '{"type":"direct","durable":true}' 'http://mq:15672/api/exchanges/%2F/it%27s%20a%2Fb'`,
    );
    assert.match(createCommand({ name: 'x', type: 'topic', durable: true, host: '', vhost: '/', nodes: [] }), /http:\/\/HOST:15672/);
  });

  it('merges the same exchange of one broker, keeps two brokers apart', function () {
    const declared = [
      { name: 'x', type: 'topic', durable: false, broker: 'a', by: '1' },
      { name: 'x', type: 'topic', durable: true, broker: 'a', by: '2' },
      { name: 'x', type: 'topic', durable: true, broker: 'c', by: '3' },
    ];
    const found = exchangesToCreate(declared, (id) => ({ id, type: 'retry-broker', host: id, vhost: '/' }));
    assert.deepEqual(found.map((e) => [e.host, e.durable, e.nodes]), [['a', true, ['1', '2']], ['c', true, ['3']]]);
  });
});
