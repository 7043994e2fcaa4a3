/**
 * The Prometheus endpoint behind Node-RED's admin authentication, in a real Node-RED with `adminAuth`:
 * refused without a token, served to a user who may only read (permission `rabbitmq-retry.read`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NodeRedProcess, packPackage, readOnlyAdminAuth, readToken, userDirWith } from '../helpers/node-red-process';
import { nodeRed4 } from './node-red-runtimes';

describe('metrics endpoint behind Node-RED admin authentication (real Node-RED)', function () {
  this.timeout(180_000);
  let red: NodeRedProcess | undefined;
  const dirs: string[] = [];

  before(async function () {
    const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    dirs.push(packDir);
    const userDir = await userDirWith(await packPackage(packDir));
    dirs.push(userDir);
    red = await NodeRedProcess.start({
      launch: await nodeRed4.prepare(),
      userDir,
      extraSettings: readOnlyAdminAuth('viewer', 'viewer-password'),
      readyRoute: '/auth/login',
    });
  });

  after(async () => {
    await red?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('answers 401 without a token and the metrics to a read-only user', async () => {
    const refused = await red!.api('GET', '/rabbitmq-retry/metrics', undefined, { accept: 'text/plain' });
    assert.equal(refused.status, 401);

    const accessToken = await readToken(red!, 'viewer', 'viewer-password');
    const served = await red!.api('GET', '/rabbitmq-retry/metrics', undefined, { accept: 'text/plain', authorization: `Bearer ${accessToken}` });
    const text = await served.text();
    assert.equal(served.status, 200, text + red!.log());
    assert.match(text, /^# HELP messaging_client_consumed_messages_total /);
  });

  it('answers 401 without a token and the history to a read-only user', async () => {
    const refused = await red!.api('GET', '/rabbitmq-retry/history');
    assert.equal(refused.status, 401);
    const accessToken = await readToken(red!, 'viewer', 'viewer-password');
    const served = await red!.api('GET', '/rabbitmq-retry/history?minutes=5000', undefined, { authorization: `Bearer ${accessToken}` });
    assert.equal(served.status, 200, red!.log());
    assert.deepEqual(await served.json(), { minutes: 1440, consumers: [] });
  });
});
