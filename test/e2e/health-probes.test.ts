/**
 * Issue 27: health probes in a real Node-RED process with the packed package, against a private
 * RabbitMQ node the test stops and starts: a flow's `http in` → `retry health` → `http response`
 * answers 200, then 503 naming the broker while the broker is stopped, then 200 again; the admin
 * endpoint GET /rabbitmq-retry/health refuses an anonymous request under `adminAuth` and answers a
 * user who may read.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { uniqueName, waitFor } from '../helpers/broker';
import { configNode, uniqueNames } from '../helpers/flows';
import { NodeRedProcess, packPackage, readOnlyAdminAuth, readToken, userDirWith } from '../helpers/node-red-process';
import { canStartPrivateNode, NO_PRIVATE_NODE, startPrivateNode, type PrivateNode } from '../helpers/private-node';
import { skipBecause } from '../helpers/skips';
import type { HealthReport } from '../../src/lib/health';
import { nodeRed4 } from './node-red-runtimes';

const PROBE = '/probe/ready';
const BROKER_NAME = uniqueName('health-broker');

describe('health probes in a real Node-RED, the broker stopped and started (private RabbitMQ node)', function () {
  this.timeout(300_000);
  let node: PrivateNode | undefined;
  let red: NodeRedProcess | undefined;
  const dirs: string[] = [];

  before(async function () {
    if (!canStartPrivateNode()) skipBecause(this, NO_PRIVATE_NODE);
    node = await startPrivateNode('health');
    const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    dirs.push(packDir);
    const userDir = await userDirWith(await packPackage(packDir));
    dirs.push(userDir);
    const names = uniqueNames('health-e2e');
    writeFileSync(
      path.join(userDir, 'flows.json'),
      JSON.stringify([
        { id: 'flow', type: 'tab', label: 'health' },
        { id: 'broker', type: 'retry-broker', name: BROKER_NAME, url: node.url, heartbeat: '5' },
        configNode(names),
        { id: 'consumer', type: 'retry-consumer', z: 'flow', name: 'orders', config: 'config', prefetch: '10', settleTimeout: '60', x: 100, y: 40, wires: [[]] },
        { id: 'in', type: 'http in', z: 'flow', url: PROBE, method: 'get', x: 100, y: 100, wires: [['health']] },
        { id: 'health', type: 'retry-health', z: 'flow', x: 300, y: 100, wires: [['out']] },
        { id: 'out', type: 'http response', z: 'flow', x: 500, y: 100, wires: [] },
      ]),
    );
    red = await NodeRedProcess.start({
      launch: await nodeRed4.prepare(),
      userDir,
      extraSettings: readOnlyAdminAuth('viewer', 'viewer-password'),
      readyRoute: '/auth/login',
    });
  });

  after(async () => {
    await red?.stop();
    node?.reset();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** What the flow's probe path answers now. */
  async function probe(): Promise<{ status: number; report: HealthReport }> {
    const response = await fetch(`${red!.base}${PROBE}`);
    return { status: response.status, report: (await response.json()) as HealthReport };
  }

  /** Probes until the answer has the status (polling: no timing assertion); the last answer. */
  async function until(status: number, what: string): Promise<HealthReport> {
    let last: { status: number; report: HealthReport } | undefined;
    await waitFor(
      async () => {
        last = await probe().catch(() => undefined);
        return last?.status === status;
      },
      `${what} (last answer: ${JSON.stringify(last)})${red!.log()}`,
      120_000,
    );
    return last!.report;
  }

  it('answers 200, then 503 naming the broker while it is stopped, then 200 again', async () => {
    const ready = await until(200, 'ready with the broker up');
    assert.equal(ready.ready, true);
    assert.equal(ready.brokers[0]?.name, BROKER_NAME);
    assert.equal(ready.brokers[0]?.connected, true);
    assert.equal(ready.consumers[0]?.state, 'consuming');

    await node!.stop();
    const down = await until(503, 'not ready with the broker stopped');
    assert.equal(down.ready, false);
    assert.equal(down.brokers[0]?.connected, false);
    assert.ok(
      down.problems.some((p) => p.startsWith(`broker '${BROKER_NAME}': `)),
      `the broker named among the problems: ${JSON.stringify(down.problems)}`,
    );

    await node!.start();
    const again = await until(200, 'ready again with the broker started');
    assert.equal(again.brokers[0]?.connected, true);
    assert.equal(again.consumers[0]?.state, 'consuming');
  });

  it('the admin endpoint refuses an anonymous request under adminAuth and answers a user who may read', async () => {
    const refused = await red!.api('GET', '/rabbitmq-retry/health');
    assert.equal(refused.status, 401);

    const accessToken = await readToken(red!, 'viewer', 'viewer-password');
    const served = await red!.api('GET', '/rabbitmq-retry/health', undefined, { authorization: `Bearer ${accessToken}` });
    const report = (await served.json()) as HealthReport;
    assert.equal(served.status, report.ready ? 200 : 503);
    assert.equal(report.brokers[0]?.name, BROKER_NAME);
    assert.deepEqual(
      report.consumers.map((c) => c.name),
      ['orders'],
    );
  });
});
