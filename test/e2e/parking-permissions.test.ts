/**
 * The operator's console behind Node-RED's admin authentication, in a real Node-RED with `adminAuth`
 * and two users: `viewer` may only read (permission `read`: sees the parked messages, their groups, a
 * search and the paced replays, and is refused every replay, redirect, paced replay, cancel and
 * purge); `operator` may do everything, and each of their actions is in Node-RED's audit log
 * (`logging.console.audit: true`) with their name, the queue, the count and the filter.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AMQP_URL, Broker, uniqueName, waitFor } from '../helpers/broker';
import { NodeRedProcess, packPackage, readToken, userDirWith } from '../helpers/node-red-process';
import { nodeRed4 } from './node-red-runtimes';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's own bcrypt, CommonJS
const bcrypt = require(require.resolve('bcryptjs', { paths: [path.dirname(require.resolve('node-red/package.json'))] })) as { hashSync(text: string, rounds: number): string };

/** settings.js: a read-only viewer, an operator with every permission, and the audit log on the console. */
function settings(): string {
  const user = (username: string, permissions: string): string => `{ username: '${username}', password: ${JSON.stringify(bcrypt.hashSync(`${username}-password`, 8))}, permissions: '${permissions}' }`;
  return `adminAuth: { type: 'credentials', users: [${user('viewer', 'read')}, ${user('operator', '*')}] },
  logging: { console: { level: 'info', metrics: false, audit: true } },`;
}

/** A token with every scope the user has (Node-RED grants the user's permissions within the asked scope). */
async function token(red: NodeRedProcess, username: string, scope: string): Promise<string> {
  if (scope === 'read') return readToken(red, username, `${username}-password`);
  const answer = await fetch(`${red.base}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: 'node-red-admin', grant_type: 'password', scope, username, password: `${username}-password` }),
  });
  assert.equal(answer.status, 200, await answer.clone().text());
  return ((await answer.json()) as { access_token: string }).access_token;
}

/** The audit events Node-RED wrote so far: `[audit] {json}` lines. */
function auditEvents(red: NodeRedProcess): Array<Record<string, any>> {
  return red
    .lines()
    .map((line) => /\[audit\] (\{.*\})\s*$/.exec(line)?.[1])
    .filter((json): json is string => json !== undefined)
    .map((json) => JSON.parse(json) as Record<string, any>)
    .filter((event) => String(event.event).startsWith('rabbitmq-retry.'));
}

describe('parking console behind Node-RED admin authentication: read sees, write acts, every act audited (real Node-RED)', function () {
  this.timeout(240_000);
  let red: NodeRedProcess | undefined;
  let broker: Broker;
  const dirs: string[] = [];
  const names = { main: uniqueName('perm-main'), parking: uniqueName('perm-parking'), fixer: uniqueName('perm-fixer') };
  let viewer: string;
  let operator: string;
  const base = '/rabbitmq-retry/parking/perm-config';

  before(async () => {
    broker = await Broker.open();
    broker.track('queue', names.main, names.parking, names.fixer);
    const ch = await broker.ch();
    for (const queue of Object.values(names)) await ch.assertQueue(queue, { durable: true });
    const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    dirs.push(packDir);
    const userDir = await userDirWith(await packPackage(packDir));
    dirs.push(userDir);
    red = await NodeRedProcess.start({ launch: await nodeRed4.prepare(), userDir, extraSettings: settings(), readyRoute: '/auth/login' });
    viewer = await token(red, 'viewer', 'read');
    operator = await token(red, 'operator', '*');
    const flow = [
      { id: 'perm-broker', type: 'retry-broker', name: 'perm broker', url: AMQP_URL },
      { id: 'perm-config', type: 'retry-config', name: 'perm', broker: 'perm-broker', mode: 'check', mainQueue: names.main, parkingQueue: names.parking, retryDelay: '1000', maxAttempts: '3' },
    ];
    const deployed = await red.api('POST', '/flows', flow, { 'Node-RED-Deployment-Type': 'full', authorization: `Bearer ${operator}` });
    assert.ok(deployed.ok, `deploy: ${deployed.status} ${await deployed.text()}${red.log()}`);
    for (const [i, reason] of ['amount 12 over the 10 limit', 'amount 99 over the 50 limit', 'customer unknown', 'gateway timeout'].entries()) {
      await broker.publish('', names.parking, { n: i }, { messageId: `perm-${i}`, headers: { 'park-reason': reason, 'park-time': new Date().toISOString(), 'park-original-exchange': '', 'park-original-routing-key': names.main } });
    }
  });

  after(async () => {
    await red?.stop();
    await broker?.cleanup();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const call = (method: string, route: string, as: string, body?: unknown) => red!.api(method, `${base}${route}`, body, { authorization: `Bearer ${as}` });

  it('a read-only user sees the parked messages, their groups, a search and the paced replays', async () => {
    for (const route of ['', '/groups', '/search?reason=amount', '/jobs']) {
      const answer = await call('GET', route, viewer);
      assert.equal(answer.status, 200, `GET ${route}: ${await answer.clone().text()}${red!.log()}`);
    }
    const search = (await (await call('GET', '/search?reason=AMOUNT', viewer)).json()) as Record<string, any>;
    assert.equal(search.matched, 2);
    assert.equal(search.lookedAt, 4);
    // History (another part of the console) where this Node-RED has it.
    const history = await red!.api('GET', '/rabbitmq-retry/history', undefined, { authorization: `Bearer ${viewer}` });
    assert.ok(history.status === 200 || history.status === 404, `history: ${history.status}`);
  });

  it('a read-only user cannot replay, redirect, pace, cancel or purge: refused, nothing moved, nothing audited', async () => {
    const before = auditEvents(red!).length;
    for (const [route, body] of [
      ['/replay', { messageIds: ['perm-0'] }],
      ['/replay', { group: 'amount {n} over the {n} limit', redirect: { exchange: '', routingKey: names.fixer } }],
      ['/paced', { rate: 5, canary: 1, canaryWait: 1 }],
      ['/jobs/any/cancel', {}],
      ['/purge', { messageIds: ['perm-3'] }],
      ['/purge', {}],
    ] as const) {
      const answer = await call('POST', route, viewer, body);
      // Node-RED answers a missing permission 401 (and audits it as its own permission.fail).
      assert.equal(answer.status, 401, `POST ${route}: ${answer.status} ${await answer.clone().text()}`);
    }
    assert.equal(await broker.messageCount(names.parking), 4);
    assert.equal(auditEvents(red!).length, before);
  });

  it("the operator's replay, redirect, paced replay, cancel and purge each go to the audit log with their name", async () => {
    const replay = await call('POST', '/replay', operator, { messageIds: ['perm-3'] });
    assert.equal(replay.status, 200, await replay.clone().text());
    const redirect = await call('POST', '/replay', operator, { group: 'amount {n} over the {n} limit', redirect: { exchange: '', routingKey: names.fixer } });
    assert.equal(redirect.status, 200, await redirect.clone().text());
    assert.equal(((await redirect.json()) as { replayed: number }).replayed, 2);
    const copy = await broker.take(names.fixer);
    assert.equal(copy.properties.headers?.['replayed-by'], 'operator');
    const paced = await call('POST', '/paced', operator, { filter: { reason: 'customer' }, rate: 1, canary: 1, canaryWait: 3600 });
    assert.equal(paced.status, 202, await paced.clone().text());
    const job = ((await paced.json()) as { job: string }).job;
    await waitFor(async () => ((await (await call('GET', `/jobs/${job}`, viewer)).json()) as { state: string }).state === 'waiting', 'the paced replay waiting for its canary');
    const cancelled = await call('POST', `/jobs/${job}/cancel`, operator, {});
    assert.equal(((await cancelled.json()) as { state: string }).state, 'cancelled');
    await broker.publish('', names.parking, { n: 9 }, { messageId: 'perm-9', headers: { 'park-reason': 'left over' } });
    const purge = await call('POST', '/purge', operator, { filter: { messageId: 'perm-9' } });
    assert.equal(((await purge.json()) as { purged: number }).purged, 1);

    await waitFor(() => auditEvents(red!).some((e) => e.event === 'rabbitmq-retry.paced-replay-end'), 'the paced replay’s end in the audit log');
    const events = auditEvents(red!);
    const summary = events.map((e) => `${e.event} ${e.user?.username ?? e.by} ${e.count ?? '-'} ${e.queue}`);
    assert.deepEqual(summary, [
      `rabbitmq-retry.replay operator 1 ${names.parking}`,
      `rabbitmq-retry.redirect operator 2 ${names.parking}`,
      `rabbitmq-retry.paced-replay operator - ${names.parking}`,
      // The run ends (between two messages) before the cancel answers.
      `rabbitmq-retry.paced-replay-end operator 1 ${names.parking}`,
      `rabbitmq-retry.paced-replay-cancel operator 1 ${names.parking}`,
      `rabbitmq-retry.purge operator 1 ${names.parking}`,
    ], red!.log());
    const redirected = events[1]!;
    assert.deepEqual(redirected.redirect, { exchange: '', routingKey: names.fixer });
    assert.equal(redirected.filter, 'group "amount {n} over the {n} limit"');
    assert.equal(redirected.config, 'perm-config');
    assert.match(events[5]!.filter, /message id contains "perm-9"/);
  });
});
