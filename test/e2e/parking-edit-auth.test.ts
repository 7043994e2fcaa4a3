/**
 * Edit & replay under Node-RED's adminAuth, in a real Node-RED with the packed package: settings.js
 * names who may edit (`rabbitmqRetry: { editParked: ['alice'] }`). A user who may only read cannot,
 * nor one with every permission whom the setting does not name; alice can, the copy says she edited
 * it, and Node-RED's audit log has the edit with her name.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AMQP_URL, Broker, uniqueName, waitFor } from '../helpers/broker';
import { NodeRedProcess, packPackage, userDirWith } from '../helpers/node-red-process';
import { nodeRed4 } from './node-red-runtimes';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's own bcrypt, CommonJS
const bcrypt = require(require.resolve('bcryptjs', { paths: [path.dirname(require.resolve('node-red/package.json'))] })) as { hashSync(text: string, rounds: number): string };

const USERS = [
  { username: 'viewer', permissions: 'read' },
  { username: 'alice', permissions: '*' },
  { username: 'bob', permissions: '*' },
];

describe('edit & replay under adminAuth: who may, and the audit log (real Node-RED)', function () {
  this.timeout(180_000);
  let red: NodeRedProcess | undefined;
  let broker: Broker;
  const dirs: string[] = [];
  const names = { exchange: uniqueName('e2e-edit-ex'), main: uniqueName('e2e-edit-main'), retryExchange: uniqueName('e2e-edit-rx'), retry: uniqueName('e2e-edit-retry'), parking: uniqueName('e2e-edit-parking') };

  before(async function () {
    broker = await Broker.open();
    broker.track('queue', names.main, names.retry, names.parking);
    broker.track('exchange', names.exchange, names.retryExchange);
    const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    dirs.push(packDir);
    const userDir = await userDirWith(await packPackage(packDir));
    dirs.push(userDir);
    const users = USERS.map((u) => ({ ...u, password: bcrypt.hashSync(`${u.username}-password`, 8) }));
    red = await NodeRedProcess.start({
      launch: await nodeRed4.prepare(),
      userDir,
      // The audit log on the console (NodeRedProcess keeps the output).
      extraSettings: `adminAuth: { type: 'credentials', users: ${JSON.stringify(users)} }, rabbitmqRetry: { editParked: ['alice'] }, logging: { console: { level: 'info', metrics: false, audit: true } },`,
      readyRoute: '/auth/login',
    });
  });

  after(async () => {
    await red?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await broker?.cleanup();
  });

  async function token(username: string): Promise<string> {
    const scope = USERS.find((u) => u.username === username)?.permissions ?? 'read';
    const response = await fetch(`${red!.base}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: 'node-red-admin', grant_type: 'password', scope, username, password: `${username}-password` }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return ((await response.json()) as { access_token: string }).access_token;
  }

  const as = async (username: string, method: string, route: string, body?: unknown): Promise<Response> => red!.api(method, route, body, { authorization: `Bearer ${await token(username)}` });

  it('refuses a reader and a writer the setting does not name; alice edits, the copy and the audit log say so', async () => {
    const flow = [
      { id: 'auth-tab', type: 'tab', label: 'edit under adminAuth' },
      { id: 'auth-broker', type: 'retry-broker', name: 'test broker', url: AMQP_URL },
      { id: 'auth-config', type: 'retry-config', broker: 'auth-broker', mode: 'declare', mainExchange: names.exchange, mainExchangeType: 'direct', mainQueue: names.main, routingKeys: 'payment', retryExchange: names.retryExchange, retryExchangeType: 'fanout', retryQueue: names.retry, retryDelay: '500', parkingQueue: names.parking, maxAttempts: '3' },
      { id: 'auth-consumer', type: 'retry-consumer', z: 'auth-tab', x: 100, y: 80, config: 'auth-config', prefetch: '10', settleTimeout: '60', decode: 'auto', invalidBody: 'park', wires: [['auth-decide']] },
      {
        id: 'auth-decide',
        type: 'function',
        z: 'auth-tab',
        x: 300,
        y: 80,
        func: "if (msg.payload.amount < 0) { msg.error = 'negative amount'; return [null, msg]; }\nglobal.set('seen', { payload: msg.payload, headers: msg.amqp.headers });\nreturn [msg, null];",
        outputs: 2,
        wires: [['auth-ack'], ['auth-park']],
      },
      { id: 'auth-ack', type: 'retry-settle', z: 'auth-tab', x: 500, y: 60, action: 'ack', wires: [] },
      { id: 'auth-park', type: 'park-publisher', z: 'auth-tab', x: 500, y: 100, wires: [[]] },
      { id: 'auth-replay', type: 'park-replay', z: 'auth-tab', x: 300, y: 160, config: 'auth-config', wires: [[]] },
      { id: 'auth-http', type: 'http in', z: 'auth-tab', x: 100, y: 220, url: '/auth-seen', method: 'get', wires: [['auth-read']] },
      { id: 'auth-read', type: 'function', z: 'auth-tab', x: 300, y: 220, func: "msg.payload = global.get('seen') || null; return msg;", outputs: 1, wires: [['auth-answer']] },
      { id: 'auth-answer', type: 'http response', z: 'auth-tab', x: 500, y: 220, wires: [] },
    ];
    const deployed = await red!.api('POST', '/flows', flow, { authorization: `Bearer ${await token('alice')}`, 'Node-RED-Deployment-Type': 'full' });
    assert.ok(deployed.ok, `deploy: ${deployed.status} ${await deployed.text()}`);
    await waitFor(async () => (await broker.exists('queue', names.main)) && (await broker.consumerCount(names.main)) === 1, 'the consumer consuming');
    await broker.publish(names.exchange, 'payment', { amount: -3 }, { messageId: 'auth-1' });
    await waitFor(async () => (await broker.messageCount(names.parking)) === 1, 'auth-1 parked');

    const EDIT = '/rabbitmq-retry/parking/auth-config/edit';
    const edit = { messageId: 'auth-1', body: '{"amount": 3}', headers: {} };
    // The reader: sees that it may not, and is refused by Node-RED's permission check.
    const viewerPolicy = (await (await as('viewer', 'GET', EDIT)).json()) as { allowed: boolean; reason: string };
    assert.deepEqual([viewerPolicy.allowed, viewerPolicy.reason], [false, "user 'viewer' is not one rabbitmqRetry.editParked names in settings.js"]);
    assert.equal((await as('viewer', 'POST', EDIT, edit)).status, 401);
    // Bob may write, but the setting does not name him.
    const bob = await as('bob', 'POST', EDIT, edit);
    assert.equal(bob.status, 403);
    assert.match(((await bob.json()) as { error: string }).error, /user 'bob' is not one rabbitmqRetry.editParked names/);
    assert.equal(await broker.messageCount(names.parking), 1);

    const alice = await as('alice', 'POST', EDIT, edit);
    const answer = (await alice.json()) as { messageId: string; replayOf: string };
    assert.equal(alice.status, 200, JSON.stringify(answer) + red!.log());
    let seen: { payload: unknown; headers: Record<string, unknown> } | null = null;
    await waitFor(async () => {
      seen = (await (await fetch(`${red!.base}/auth-seen`)).json()) as typeof seen;
      return seen !== null;
    }, 'the edited copy through the flow');
    const copy = seen as unknown as { payload: unknown; headers: Record<string, unknown> };
    assert.deepEqual(copy.payload, { amount: 3 });
    assert.equal(copy.headers['replayed-by'], 'alice');
    assert.equal(copy.headers['replay-of'], 'auth-1');
    assert.equal(await broker.messageCount(names.parking), 0);

    // Node-RED's audit log: the edit with alice's name, bob's refusal with his.
    const audit = (): string[] => red!.lines().filter((line) => line.includes('[audit]') && line.includes('rabbitmq-retry.edit'));
    await waitFor(() => audit().some((line) => line.includes('"username":"alice"')), 'the audit line of alice’s edit');
    const aliceLine = audit().find((line) => line.includes('"username":"alice"')) ?? '';
    assert.match(aliceLine, /"messageId":"auth-1"/);
    assert.ok(aliceLine.includes(`"copyId":"${answer.messageId}"`), aliceLine);
    assert.ok(audit().some((line) => line.includes('"username":"bob"') && line.includes('"error"')), audit().join('\n'));
  });
});
