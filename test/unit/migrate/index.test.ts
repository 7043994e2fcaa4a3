/**
 * Issue 41: the flow converter, per package and per field (src/migrate). Pure: flows in, flows,
 * report and credentials out. The deploy of the converted examples is test/integration/migrate-flows.test.ts.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { convertFlows, reportText, type ConvertOptions, type ConvertResult, type FlowNode } from '../../../src/migrate';
import { NUMBER_FIELDS, PROPERTY_VERSIONS } from '../../../src/migrate/node-tables';
import { topologyProblemsOf } from '../../../src/nodes/shared/topology-definition';

interface RedUtil {
  prepareJSONataExpression(expression: string, node: object): unknown;
  evaluateJSONataExpression(expression: unknown, msg: object, callback: (err: Error | null, value: unknown) => void): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's own JSONata evaluation, as the switch and change nodes run it
const redUtil = (require('@node-red/util') as { util: RedUtil }).util;

const FIXTURES = path.resolve(__dirname, '../../fixtures/migrate');
const fixture = (file: string): FlowNode[] => JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8')) as FlowNode[];

function convert(nodes: FlowNode[], options: ConvertOptions = {}): ConvertResult & { node(id: string): FlowNode; configOf(id: string): FlowNode } {
  const result = convertFlows([{ id: 'tab', type: 'tab', label: 't' }, ...nodes], options);
  const node = (id: string): FlowNode => {
    const found = result.flows.find((n) => n.id === id);
    assert.ok(found, `node ${id} in the result`);
    return found;
  };
  return { ...result, node, configOf: (id) => node(String(node(id).config)) };
}

const at = { z: 'tab', x: 200, y: 100 };
const mwBroker: FlowNode = { id: 'b', type: 'amqp-broker', name: 'rabbit', host: 'mq.example', port: 5671, vhost: 'prod', tls: true, credsFromSettings: false };
const mwIn = (extra: Record<string, unknown> = {}): FlowNode => ({ id: 'in', type: 'amqp-in', ...at, name: 'orders in', broker: 'b', prefetch: 0, noAck: true, exchangeName: 'orders', exchangeType: 'topic', exchangeRoutingKey: 'order.*, order.created', exchangeDurable: true, queueName: 'orders', queueExclusive: false, queueDurable: true, queueAutoDelete: false, headers: '{}', wires: [['next']], ...extra });
const mwOut = (extra: Record<string, unknown> = {}): FlowNode => ({ id: 'out', type: 'amqp-out', ...at, name: 'publish', broker: 'b', exchangeName: 'orders', exchangeType: 'topic', exchangeRoutingKey: 'order.created', exchangeRoutingKeyType: 'str', exchangeDurable: true, amqpProperties: '{ "appId": "shop", "headers": {} }', rpcTimeoutMilliseconds: 3000, outputs: 0, wires: [], ...extra });
const next: FlowNode = { id: 'next', type: 'function', ...at, func: 'return msg;', wires: [[]] };

async function jsonata(expression: string, msg: Record<string, unknown>): Promise<unknown> {
  const prepared = redUtil.prepareJSONataExpression(expression, {});
  return new Promise((resolve, reject) => redUtil.evaluateJSONataExpression(prepared, msg, (err, value) => (err ? reject(err) : resolve(value))));
}

describe('flow converter (issue 41)', function () {
  describe('@meowwolf/node-red-contrib-amqp', function () {
    it('amqp-broker → retry-broker: same id, host, port, vhost, TLS; user and password into the credentials, never into the flows', function () {
      const r = convert([{ ...mwBroker, credentials: { username: 'shop', password: 'S3cret!' } }], { credentials: { b: { username: 'from-file', password: 'S3cret!' } } });
      const b = r.node('b');
      assert.equal(b.type, 'retry-broker');
      assert.deepEqual([b.host, b.port, b.vhost, b.tls, b.name, b.url], ['mq.example', 5671, 'prod', true, 'rabbit', '']);
      assert.deepEqual(r.credentials.b, { user: 'shop', password: 'S3cret!' });
      assert.doesNotMatch(JSON.stringify(r.flows), /S3cret/);
      assert.doesNotMatch(JSON.stringify(r.report) + reportText(r), /S3cret/);
    });

    it('an empty vhost is the default one; credentials from settings.js are said to be entered again', function () {
      const r = convert([{ ...mwBroker, vhost: '', tls: false, port: '5672', credsFromSettings: true }]);
      assert.deepEqual([r.node('b').vhost, r.node('b').port, r.node('b').tls], ['/', 5672, false]);
      assert.match(reportText(r), /MW_CONTRIB_AMQP_USERNAME/);
      assert.deepEqual(r.credentials, {});
    });

    it('amqp-in → retry-consumer (same id, name, position, wires) + retry-config in check mode on the existing queue', function () {
      const r = convert([mwBroker, mwIn({ prefetch: '5' }), next]);
      const c = r.node('in');
      assert.equal(c.type, 'retry-consumer');
      assert.deepEqual([c.name, c.x, c.y, c.z, c.prefetch], ['orders in', 200, 100, 'tab', 5]);
      assert.equal(c.wires?.[0]?.[0], 'next');
      const config = r.configOf('in');
      assert.deepEqual(
        [config.broker, config.mode, config.existingQueue, config.mainQueue, config.mainExchange, config.mainExchangeType, config.routingKeys, config.retryExchange],
        ['b', 'check', true, 'orders', 'orders', 'topic', 'order.*,order.created', ''],
      );
      assert.deepEqual(topologyProblemsOf(config), []);
    });

    it('the converted consumer has every property the runtime reads, at the editor\'s defaults', function () {
      const c = convert([mwBroker, mwIn(), next]).node('in');
      for (const name of [...Object.keys(NUMBER_FIELDS['retry-consumer']), ...Object.keys(PROPERTY_VERSIONS['retry-consumer']?.added ?? {})]) assert.ok(name in c, `retry-consumer.${name}`);
      assert.equal(c.version, PROPERTY_VERSIONS['retry-consumer']?.version);
      assert.equal(c.settleTimeout, NUMBER_FIELDS['retry-consumer'].settleTimeout.fallback);
    });

    it('noAck (ack on arrival) is kept: a retry-settle (ack) wired from the consumer, next to the flow', function () {
      const r = convert([mwBroker, mwIn(), next]);
      const ack = r.flows.find((n) => n.type === 'retry-settle');
      assert.ok(ack);
      assert.equal(ack.action, 'ack');
      assert.deepEqual(r.node('in').wires, [['next', ack.id]]);
      assert.equal(ack.z, 'tab');
    });

    it('prefetch 0 (unlimited) becomes 10, said in the report', function () {
      const r = convert([mwBroker, mwIn({ prefetch: 0 }), next]);
      assert.equal(r.node('in').prefetch, 10);
      assert.match(reportText(r), /prefetch 0/);
    });

    it('a server-named temporary queue becomes a durable one named after the node; an empty routing key binds the queue name', function () {
      const r = convert([mwBroker, mwIn({ queueName: '', exchangeRoutingKey: '', queueExclusive: true, queueAutoDelete: true }), next]);
      const config = r.configOf('in');
      assert.equal(config.mainQueue, 'migrated.in');
      assert.equal(config.routingKeys, 'migrated.in');
      assert.match(reportText(r), /durable queue 'migrated.in'/);
    });

    it('a fanout exchange binds without keys; the default exchange needs none', function () {
      assert.equal(convert([mwBroker, mwIn({ exchangeType: 'fanout' }), next]).configOf('in').routingKeys, '');
      const direct = convert([mwBroker, mwIn({ exchangeName: '' }), next]).configOf('in');
      assert.deepEqual([direct.mainExchange, direct.routingKeys], ['', '']);
      assert.deepEqual(topologyProblemsOf(direct), []);
    });

    it('a headers exchange consumer is kept, with a comment next to it saying why', function () {
      const r = convert([mwBroker, mwIn({ exchangeType: 'headers' }), next]);
      assert.equal(r.node('in').type, 'amqp-in');
      const note = r.flows.find((n) => n.type === 'comment');
      assert.ok(note);
      assert.match(String(note.name), /headers exchange/);
      assert.equal(note.z, 'tab');
      assert.deepEqual(r.report.find((e) => e.id === 'in')?.outcome, 'kept');
    });

    it('amqp-in-manual-ack: the msgs wired back into it go to a switch on msg.manualAck: ack, retry, park', async function () {
      const back: FlowNode = { id: 'back', type: 'link in', ...at, links: [], wires: [['in']] };
      const r = convert([mwBroker, mwIn({ type: 'amqp-in-manual-ack', noAck: false }), next, back]);
      const router = r.flows.find((n) => n.type === 'switch');
      assert.ok(router);
      assert.deepEqual(r.node('back').wires, [[router.id]]);
      const targets = (router.wires ?? []).map((port) => r.node(port[0] ?? ''));
      assert.deepEqual(targets.map((n) => [n.type, n.action ?? '']), [['retry-settle', 'ack'], ['retry-settle', 'retry'], ['park-publisher', '']]);
      assert.ok(!r.flows.some((n) => n.type === 'retry-settle' && (r.node('in').wires?.[0] ?? []).includes(n.id)), 'no ack on arrival');
      const values = (router.rules as Array<{ v: string }>).map((rule) => rule.v);
      const route = async (msg: Record<string, unknown>): Promise<unknown> => jsonata(String(router.property), msg);
      assert.deepEqual(values, ['ack', 'retry', 'park']);
      assert.equal(await route({ payload: 1 }), 'ack');
      assert.equal(await route({ manualAck: { ackMode: 'ack' } }), 'ack');
      assert.equal(await route({ manualAck: { ackMode: 'nack' } }), 'retry');
      assert.equal(await route({ manualAck: { ackMode: 'reject', requeue: true } }), 'retry');
      assert.equal(await route({ manualAck: { ackMode: 'nack', requeue: false } }), 'park');
    });

    it('amqp-out → retry-publish: exchange, routing key (msg.routingKey still wins) and fixed properties (msg.properties wins) through a change node', async function () {
      const inject: FlowNode = { id: 'inject', type: 'inject', ...at, wires: [['out']] };
      const r = convert([mwBroker, mwOut(), inject]);
      const p = r.node('out');
      assert.deepEqual([p.type, p.broker, p.exchange, p.routingKey, p.mode, p.persistent], ['retry-publish', 'b', 'orders', '', 'publish', true]);
      const prepare = r.node(r.node('inject').wires?.[0]?.[0] ?? '');
      assert.equal(prepare.type, 'change');
      assert.deepEqual(prepare.wires, [['out']]);
      const [topic, properties] = prepare.rules as Array<{ p: string; to: string }>;
      assert.equal(await jsonata(topic?.to ?? '', {}), 'order.created');
      assert.equal(await jsonata(topic?.to ?? '', { routingKey: 'order.paid' }), 'order.paid');
      assert.deepEqual(await jsonata(properties?.to ?? '', {}), { appId: 'shop' });
      assert.deepEqual(await jsonata(properties?.to ?? '', { properties: { appId: 'other', messageId: 'm' } }), { appId: 'other', messageId: 'm' });
    });

    it('a routing key from msg, flow, global or JSONata goes to msg.topic the same way', function () {
      const r = convert([mwBroker, { ...mwOut(), exchangeRoutingKey: 'payload.key', exchangeRoutingKeyType: 'msg' }, { id: 'i', type: 'inject', ...at, wires: [['out']] }]);
      const prepare = r.node(r.node('i').wires?.[0]?.[0] ?? '');
      assert.deepEqual((prepare.rules as unknown[])[0], { t: 'set', p: 'topic', pt: 'msg', to: 'payload.key', tot: 'msg' });
    });

    it('kept with a comment: an RPC request, an RPC answer to replyTo, several routing keys', function () {
      for (const extra of [{ outputs: 1 }, { exchangeName: '' }, { exchangeRoutingKey: 'a,b' }]) {
        const r = convert([mwBroker, { ...mwOut(), ...extra }]);
        assert.equal(r.node('out').type, 'amqp-out', JSON.stringify(extra));
        assert.equal(r.report.find((e) => e.id === 'out')?.outcome, 'kept');
        assert.ok(r.flows.some((n) => n.type === 'comment'));
      }
    });

    it('the report lists every node of the input: converted, kept (and why), added', function () {
      const r = convertFlows(fixture('meowwolf/AMQP General Usage.json'));
      const input = fixture('meowwolf/AMQP General Usage.json').filter((n) => n.type !== 'tab');
      for (const n of input) assert.ok(r.report.some((e) => e.id === n.id && e.outcome !== 'added'), `${n.type} ${n.id} in the report`);
      assert.ok(r.report.every((e) => e.outcome === 'converted' || e.notes.length > 0));
      // In the input's order, each node followed by the nodes added for it.
      const at = r.report.findIndex((e) => e.id === '3c555900.750918');
      assert.deepEqual(r.report.slice(at, at + 3).map((e) => [e.outcome, e.type, e.for]), [['converted', 'amqp-in', undefined], ['added', 'retry-config', '3c555900.750918'], ['added', 'retry-settle', '3c555900.750918']]);
    });
  });

  describe('@frankvdb/node-red-contrib-amqp', function () {
    it('is told apart by its own fields; its queue type and arguments are what a missing queue is created with', function () {
      const r = convert([mwBroker, mwIn({ queueType: 'quorum', queueArguments: '{"x-delivery-limit": 5}', reconnectOnError: false }), next]);
      assert.equal(r.report.find((e) => e.id === 'in')?.package, '@frankvdb/node-red-contrib-amqp');
      assert.deepEqual(JSON.parse(String(r.configOf('in').mainQueueArgs)), { 'x-delivery-limit': 5, 'x-queue-type': 'quorum' });
      assert.deepEqual(topologyProblemsOf(r.configOf('in')), []);
    });

    it('a publisher that did not wait for confirms is said to now', function () {
      const r = convert([mwBroker, { ...mwOut(), waitForConfirms: false }]);
      assert.match(reportText(r), /did not wait for confirms/);
    });

    it('MeowWolf\'s flows stay MeowWolf\'s', function () {
      assert.equal(convert([mwBroker, mwIn(), next]).report.find((e) => e.id === 'in')?.package, '@meowwolf/node-red-contrib-amqp');
    });
  });

  const server: FlowNode = { id: 's', type: 'amqp-server', host: 'mq', port: '5672', vhost: 'v', keepalive: '20', usetls: true, verifyservercert: false, usetopology: true, topology: '{}' };
  const abIn = (extra: Record<string, unknown> = {}): FlowNode => ({ id: 'in', type: 'amqp in', ...at, name: 'orders', topic: '', iotype: '4', ioname: 'orders', server: 's', wires: [['next']], ...extra });

  describe('node-red-contrib-amqp (abreits)', function () {
    it('amqp-server → retry-broker: keepalive is the heartbeat, TLS kept, what cannot map said', function () {
      const r = convert([server], { credentials: { s: { user: 'u', password: 'S3cret!' } } });
      const b = r.node('s');
      assert.deepEqual([b.type, b.host, b.port, b.vhost, b.tls, b.heartbeat], ['retry-broker', 'mq', 5672, 'v', true, 20]);
      assert.deepEqual(r.credentials.s, { user: 'u', password: 'S3cret!' });
      assert.match(reportText(r), /server certificate/);
      assert.match(reportText(r), /topology JSON is not converted/);
    });

    it('a queue consumer (iotype 4) reads that queue on the default exchange, acked on arrival', function () {
      const r = convert([server, abIn(), next]);
      const config = r.configOf('in');
      assert.deepEqual([config.mainQueue, config.mainExchange, config.routingKeys, config.broker], ['orders', '', '', 's']);
      assert.ok(r.flows.some((n) => n.type === 'retry-settle' && n.action === 'ack'));
    });

    it('a topic exchange consumer (iotype 3) gets a durable queue bound with #; direct and headers exchange consumers are kept', function () {
      const config = convert([server, abIn({ iotype: '3', ioname: 'events' }), next]).configOf('in');
      assert.deepEqual([config.mainQueue, config.mainExchange, config.mainExchangeType, config.routingKeys], ['migrated.in', 'events', 'topic', '#']);
      for (const iotype of ['0', '2']) assert.equal(convert([server, abIn({ iotype, ioname: 'x' }), next]).node('in').type, 'amqp in');
    });

    it('with settle-at-end, the flow\'s end acks (complete) and a throw downstream retries (catch)', function () {
      const r = convert([server, abIn({ wires: [['next', 'dbg']] }), next, { id: 'dbg', type: 'debug', ...at, wires: [] }], { autoAck: 'settle-at-end' });
      const done = r.flows.find((n) => n.type === 'complete');
      const failed = r.flows.find((n) => n.type === 'catch');
      assert.deepEqual(done?.scope, ['next'], 'the end that is not a debug node');
      assert.deepEqual(new Set(failed?.scope as string[]), new Set(['next', 'dbg']));
      assert.equal(r.node(done?.wires?.[0]?.[0] ?? '').action, 'ack');
      assert.equal(r.node(failed?.wires?.[0]?.[0] ?? '').action, 'retry');
    });

    it('amqp out to a queue publishes on the default exchange; to an exchange with its routing key (empty: msg.topic)', function () {
      const q = convert([server, { id: 'out', type: 'amqp out', ...at, routingkey: '', iotype: '4', ioname: 'orders', server: 's', wires: [] }]).node('out');
      assert.deepEqual([q.type, q.exchange, q.routingKey], ['retry-publish', '', 'orders']);
      const x = convert([server, { id: 'out', type: 'amqp out', ...at, routingkey: 'k', iotype: '3', ioname: 'events', server: 's', wires: [] }]).node('out');
      assert.deepEqual([x.exchange, x.routingKey], ['events', 'k']);
    });
  });

  describe('node-red-contrib-amqp-ack', function () {
    const ackServer: FlowNode = { ...server, usetls: false, usetopology: false, prefetch: true, prefetchvalue: '7', prefetchack: false, prefetchvalueack: '10' };

    it('its consumers are settled by its amqp ack nodes: ack → retry-settle ack, nack (requeue) → retry-settle retry', function () {
      const r = convert([ackServer, abIn(), next, { id: 'a', type: 'amqp ack', ...at, nack: false, server: 's', wires: [['after']] }, { id: 'n', type: 'amqp ack', ...at, nack: true, server: 's', wires: [] }, { id: 'after', type: 'debug', ...at, wires: [] }, { id: 'f', type: 'function', ...at, wires: [['a'], ['n']] }]);
      assert.equal(r.report.find((e) => e.id === 'in')?.package, 'node-red-contrib-amqp-ack');
      assert.equal(r.node('in').prefetch, 7);
      assert.ok(!r.flows.some((n) => n.type === 'retry-settle' && n.id !== 'a' && n.id !== 'n'), 'no ack on arrival');
      assert.deepEqual([r.node('a').type, r.node('a').action, r.node('n').action], ['retry-settle', 'ack', 'retry']);
      assert.deepEqual(r.node('f').wires, [['a', 'after'], ['n']], 'what amqp ack passed on is fed from its inputs');
    });

    it('acks after a timeout become acks on arrival; a queue from msg.readFrom is kept', function () {
      const r = convert([{ ...ackServer, prefetchack: true }, abIn(), next, { ...abIn(), id: 'dyn', ioname: '' }]);
      assert.ok(r.flows.some((n) => n.type === 'retry-settle' && n.action === 'ack'));
      assert.match(reportText(r), /ms after it arrived/);
      assert.equal(r.node('dyn').type, 'amqp in');
    });
  });

  describe('scope and credentials', function () {
    it('converts only the selected nodes and the broker they use', function () {
      const other = { ...mwIn(), id: 'other', wires: [[]] };
      const r = convert([mwBroker, mwIn(), other, next], { only: new Set(['in']) });
      assert.equal(r.node('in').type, 'retry-consumer');
      assert.equal(r.node('b').type, 'retry-broker');
      assert.equal(r.node('other').type, 'amqp-in');
    });

    it('credentials carried by an export or the credentials file of unchanged nodes go with the result, never into the flows', function () {
      const mqtt: FlowNode = { id: 'm', type: 'mqtt-broker', credentials: { user: 'x', password: 'S3cret!' } };
      const r = convert([mwBroker, mqtt], { credentials: { other: { password: 'gone' }, b: { username: 'u', password: 'p' } } });
      assert.deepEqual(r.credentials.m, { user: 'x', password: 'S3cret!' });
      assert.deepEqual(r.credentials.b, { user: 'u', password: 'p' });
      assert.ok(!('other' in r.credentials), 'no credentials of a node that is not there');
      assert.doesNotMatch(JSON.stringify(r.flows), /S3cret/);
    });

    it('keeps the converter free of Node.js APIs (the editor bundle runs it): only the command\'s files use them', function () {
      const dir = path.resolve(__dirname, '../../../src/migrate');
      const nodeSide = new Set(['cli.ts', 'cli-files.ts', 'credential-file.ts']);
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !nodeSide.has(f))) {
        const code = readFileSync(path.join(dir, file), 'utf8');
        assert.doesNotMatch(code, /from '(node:|fs|path|crypto|os)|require\(|\bprocess\.|\bBuffer\b/, `src/migrate/${file} uses a Node.js API`);
        assert.doesNotMatch(code, /from '\.\/(cli|credential-file)'/, `src/migrate/${file} imports the command's side`);
      }
    });

    it('refuses what is not a flows file', function () {
      assert.throws(() => convertFlows({} as unknown as FlowNode[]), /not a flows file/);
    });
  });
});
