/**
 * What a retry flow keeps of the package's msg fields through the core nodes users put between the
 * consumer and the settle (real core nodes of the installed Node-RED, real broker; the suite runs
 * against each broker version): http request (it sets `msg.retry = 0` on every response), change,
 * split / join, delay, and a function that returns a new msg with `msg.amqp` only. On each path the
 * attempt is still on the msg (`msg.amqp.retry`) and the wait the flow asked for (1.5 s) is the one
 * the retry takes: the 2 s tier, not the first (300 ms) one. Where `msg.retry` was replaced, the
 * retry-settle warns once. docs/msg.md's table of core nodes says the same.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { coreNodes, helper, loadFlow, packageNodes } from '../helpers/node-red';

type Msg = Record<string, any>;

const core = path.dirname(require.resolve('@node-red/nodes/package.json'));
/* eslint-disable @typescript-eslint/no-require-imports -- Node-RED node modules are CommonJS functions */
const moreCoreNodes: unknown[] = [
  require(path.join(core, 'core/network/21-httprequest.js')),
  require(path.join(core, 'core/sequence/17-split.js')),
  require(path.join(core, 'core/function/89-delay.js')),
];
/* eslint-enable @typescript-eslint/no-require-imports */

/** The paths a first attempt takes, by `msg.payload.via`; each ends in a retry-settle of its own. */
const PATHS = ['http', 'change', 'split', 'delay', 'function'] as const;
type Via = (typeof PATHS)[number];

/** A change node's rule setting a msg property to a number or a string. */
const set = (p: string, to: number | string) => ({ t: 'set', p, pt: 'msg', to: String(to), tot: typeof to === 'number' ? 'num' : 'str' });

describe('msg fields through core nodes: the attempt and the asked wait survive (real broker)', function () {
  let broker: Broker;
  let names: Names;
  let server: Server;
  let port: number;

  before(async () => {
    // The service a flow calls: busy, always.
    server = createServer((_req, res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('busy'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('corenodes');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue, `${names.retryQueue}.300ms`, `${names.retryQueue}.2s`);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  /**
   * consumer → route: a second attempt to ack, a first one down its path to its own retry-settle,
   * and to a probe (`probe-<via>`) just before it. Each path asks for a 1.5 s wait the way a flow
   * there would.
   */
  function flow(): Array<Record<string, unknown>> {
    const end = (via: Via) => [`settle-${via}`, `probe-${via}`];
    const route = `
      if (msg.retry.attempt > 1) return [msg, null, null, null, null, null];
      const outs = [null, null, null, null, null, null];
      outs[${JSON.stringify(PATHS)}.indexOf(msg.payload.via) + 1] = msg;
      return outs;`;
    return [
      tab(),
      brokerNode(),
      configNode(names, { retryExchange: '', retryDelay: '300ms, 2s', maxAttempts: '3' }),
      consumerNode([['route', 'seen']]),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'route', type: 'function', z: 'flow', func: route, outputs: 6, wires: [['ack'], ['http'], ['change'], ['split-pre'], ['delay-pre'], ['function-pre']] },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      // http request: msg.retry = 0 on the response; the flow asks its wait on msg.amqp.retry.
      { id: 'http', type: 'http request', z: 'flow', method: 'GET', ret: 'txt', url: `http://127.0.0.1:${port}/busy`, paytoqs: 'ignore', wires: [['http-after']] },
      { id: 'http-after', type: 'change', z: 'flow', rules: [set('amqp.retry.delay', 1500), set('error', 'HTTP 503')], wires: [end('http')] },
      // change: msg.retry.delay set on the consumer's msg.retry.
      { id: 'change', type: 'change', z: 'flow', rules: [set('retry.delay', 1500), set('error', 'refused')], wires: [end('change')] },
      // split / join: the wait asked before the split; the parts joined again.
      { id: 'split-pre', type: 'change', z: 'flow', rules: [set('retry.delay', 1500), set('error', 'one part failed'), { t: 'set', p: 'payload', pt: 'msg', to: '[1,2,3]', tot: 'json' }], wires: [['split']] },
      { id: 'split', type: 'split', z: 'flow', splt: '\\n', spltType: 'str', arraySplt: 1, arraySpltType: 'len', stream: false, addname: '', wires: [['join']] },
      { id: 'join', type: 'join', z: 'flow', mode: 'auto', build: 'object', property: 'payload', propertyType: 'msg', key: 'topic', joiner: '\\n', joinerType: 'str', accumulate: false, timeout: '', count: '', reduceRight: false, wires: [end('split')] },
      // delay: the msg held a moment.
      { id: 'delay-pre', type: 'change', z: 'flow', rules: [set('retry.delay', 1500), set('error', 'later')], wires: [['delay']] },
      { id: 'delay', type: 'delay', z: 'flow', pauseType: 'delay', timeout: '20', timeoutUnits: 'milliseconds', rate: '1', nbRateUnits: '1', rateUnits: 'second', randomFirst: '1', randomLast: '5', randomUnits: 'seconds', drop: false, allowrate: false, outputs: 1, wires: [end('delay')] },
      // function: a new msg that keeps msg.amqp only (msg.retry left out); the wait was asked before it.
      { id: 'function-pre', type: 'change', z: 'flow', rules: [set('retry.delay', 1500)], wires: [['function']] },
      { id: 'function', type: 'function', z: 'flow', func: "return { payload: 'rebuilt', amqp: msg.amqp, error: 'rebuilt' };", outputs: 1, wires: [end('function')] },
      ...PATHS.flatMap((via) => [
        { id: `settle-${via}`, type: 'retry-settle', z: 'flow', action: 'retry', wires: [] },
        { id: `probe-${via}`, type: 'helper', z: 'flow' },
      ]),
    ];
  }

  it('http request, change, split / join, delay, a function keeping msg.amqp: the attempt and the 1.5 s wait survive; a replaced msg.retry is warned once', async function () {
    this.timeout(30_000);
    await loadFlow(flow(), [...packageNodes, ...coreNodes, ...moreCoreNodes]);
    const seen: Msg[] = [];
    helper.getNode('seen').on('input', (m: Msg) => seen.push(m));
    const probes = new Map<Via, Msg[]>();
    const warnings = new Map<Via, string[]>();
    for (const via of PATHS) {
      const probed: Msg[] = [];
      const warned: string[] = [];
      probes.set(via, probed);
      warnings.set(via, warned);
      helper.getNode(`probe-${via}`).on('input', (m: Msg) => probed.push(m));
      helper.getNode(`settle-${via}`).on('call:warn', (call: { args: unknown[] }) => warned.push(String(call.args[0])));
    }
    await broker.waitForConsumer(names.mainQueue);
    // Two messages down each path: the warning is said once, not per message.
    for (const via of PATHS) for (const n of [1, 2]) await broker.publish(names.mainExchange, names.routingKey, { via, n }, { messageId: `${via}-${n}` });
    await waitFor(() => seen.filter((m) => m.retry.attempt === 2).length === PATHS.length * 2, 'every message retried once and acked', 25_000);

    for (const via of PATHS) {
      const probed = probes.get(via) ?? [];
      assert.equal(probed.length, 2, `${via}: both messages reached the settle`);
      for (const m of probed) {
        assert.equal(m.amqp.retry.attempt, 1, `${via}: msg.amqp.retry.attempt`);
        assert.equal(m.amqp.retry.maxAttempts, 3, `${via}: msg.amqp.retry.maxAttempts`);
      }
      const retry = probed[0]?.retry;
      if (via === 'http') assert.equal(retry, 0, 'the http request node sets msg.retry = 0 (docs/msg.md says so)');
      else if (via === 'function') assert.equal(retry, undefined);
      else assert.equal(retry?.attempt, 1, `${via} keeps msg.retry`);
      // The tier the retry waited in: the first at least 1.5 s long.
      for (const n of [1, 2]) {
        const second = seen.find((m) => m.amqp.properties.messageId === `${via}-${n}` && m.retry.attempt === 2);
        const waitedIn = second?.retry.deaths.filter((d: Msg) => d.reason === 'expired').map((d: Msg) => d.queue);
        assert.deepEqual(waitedIn, [`${names.retryQueue}.2s`], `${via}-${n}: the wait asked for (1.5 s), not the first tier`);
      }
      const warned = warnings.get(via) ?? [];
      const replaced = warned.filter((w) => w.includes('msg.retry is no longer what the retry consumer set'));
      assert.equal(replaced.length, via === 'http' || via === 'function' ? 1 : 0, `${via}: ${JSON.stringify(warned)}`);
      assert.equal(warned.length, replaced.length, `${via}: no other warning: ${JSON.stringify(warned)}`);
    }
    assert.match(warnings.get('http')?.[0] ?? '', /it is now 0/);
    assert.match(warnings.get('function')?.[0] ?? '', /it is now undefined/);
    assert.equal(await broker.messageCount(names.parkingQueue), 0);
  });
});
