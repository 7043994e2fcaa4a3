/**
 * examples/operator-dashboard.json in a real Node-RED 4.1 with the PACKED package and Dashboard 2.0
 * (`@flowfuse/node-red-dashboard` from the npm registry, cached outside the repository: see
 * dashboard-package.ts), against the real broker, its page opened in chromium (playwright-core): it
 * lists the parked group, asks before a replay, and once confirmed the group leaves the table and its
 * messages are back in the main queue; the replay is in Node-RED's audit log. Takes the README's
 * screenshot (docs/images/operator-dashboard.png with UPDATE_SCREENSHOTS=1, else a temp dir).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { AMQP_URL, Broker, MANAGEMENT_URL, uniqueName, waitFor } from '../helpers/broker';
import { NodeRedProcess, packPackage, PACKAGE, userDirWith } from '../helpers/node-red-process';
import { needChromium } from '../helpers/skips';
import { serviceUrls } from '../../scripts/services.mjs';
import { addDashboard, DASHBOARD } from './dashboard-package';
import { nodeRed4 } from './node-red-runtimes';

const root = path.resolve(__dirname, '../..');
const CHROMIUM = serviceUrls(process.env).chromium;
const IMAGES = process.env.UPDATE_SCREENSHOTS === '1' ? path.join(root, 'docs', 'images') : path.join(os.tmpdir(), 'rabbitmq-retry-screenshots');
const ID = '0d5b0a4d0000';

describe('the operator page on Dashboard 2.0 (examples/operator-dashboard.json, packed package, chromium)', function () {
  this.timeout(300_000);
  const tempDirs: string[] = [];
  let red: NodeRedProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let broker: Broker;
  let names: { main: string; parking: string; exchange: string };
  const pageErrors: string[] = [];

  before(async function () {
    needChromium(this);
    broker = await Broker.open();
    const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    tempDirs.push(packDir);
    const userDir = await userDirWith(await packPackage(packDir));
    tempDirs.push(userDir);
    await addDashboard(userDir);
    red = await NodeRedProcess.start({
      launch: await nodeRed4.prepare(),
      userDir,
      env: { AMQP_URL, RABBITMQ_MANAGEMENT_URL: MANAGEMENT_URL },
      extraSettings: "logging: { console: { level: 'info', metrics: false, audit: true } },",
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (err) => pageErrors.push(err.message));
  });

  after(async function () {
    await browser?.close();
    await red?.stop();
    await broker?.cleanup();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('installs with the example: both modules are in Node-RED, and the example names them as 4.x exports do (global-config modules)', async function () {
    const nodes = (await red!.getJson('/nodes')) as Array<{ module: string; types: string[] }>;
    const types = (module: string): string[] => nodes.filter((n) => n.module === module).flatMap((n) => n.types);
    assert.ok(types(DASHBOARD).includes('ui-table'), `Dashboard 2.0 is not loaded${red!.log()}`);
    assert.ok(types(PACKAGE).includes('retry-console'));
    const example = JSON.parse(readFileSync(path.join(root, 'examples', 'operator-dashboard.json'), 'utf8')) as Array<Record<string, unknown>>;
    const global = example.find((n) => n.type === 'global-config') as { modules: Record<string, string> } | undefined;
    assert.deepEqual(Object.keys(global?.modules ?? {}).sort(), [DASHBOARD, PACKAGE].sort());
    const known = new Set([...nodes.flatMap((n) => n.types), 'tab', 'global-config']);
    assert.deepEqual(example.map((n) => String(n.type)).filter((t) => !known.has(t)), [], 'every node type of the example is installed');
  });

  it('lists a parked group on its page and replays it after a confirmation: the group leaves the table, its messages are back in the main queue', async function () {
    // The example as shipped, its broker objects renamed for this run; and an inject to pause the consumer for the replay.
    const prefix = uniqueName('operator-payments');
    names = { main: prefix, parking: `${prefix}.parking`, exchange: prefix };
    broker.track('queue', prefix, `${prefix}.retry`, `${prefix}.parking`);
    broker.track('exchange', prefix, `${prefix}.retry`);
    const text = readFileSync(path.join(root, 'examples', 'operator-dashboard.json'), 'utf8').replace(/operator-payments/g, prefix);
    const flow = JSON.parse(text) as Array<Record<string, unknown>>;
    flow.push({ id: 'e2e-pause', type: 'inject', z: `${ID}0001`, name: 'pause (test)', props: [{ p: 'topic', vt: 'str' }], topic: 'pause', repeat: '', once: false, x: 150, y: 620, wires: [[`${ID}0030`]] });
    await red!.deploy(flow);
    await waitFor(async () => (await broker.consumerCount(names.main)) === 1, 'the example consumer');

    for (const amount of [210.23, 10.23, 350]) await broker.publish(names.exchange, 'payment', { amount, remark: 'card payment' });
    await broker.publish(names.exchange, 'payment', { amount: 42.5, flaky: true });
    await waitFor(async () => (await broker.messageCount(names.parking)) === 2, 'two payments parked');

    await page.goto(`${red!.base}/dashboard/parking`);
    const row = page.locator('tr', { hasText: 'over the 100.00 limit' });
    await row.first().waitFor({ state: 'visible', timeout: 60_000 });
    assert.match((await row.first().textContent()) ?? '', /amount 210\.23 is over the 100\.00 limit\s*2/);
    // The consumer's state and the chart are there; the flaky payment's two retries in the chart's data.
    await page.getByText(/ready — payments: consuming · kill switch closed/).waitFor({ timeout: 30_000 });
    await waitFor(async () => {
      const history = (await red!.getJson(`/rabbitmq-retry/history?config=${ID}0011&minutes=5`)) as { consumers: Array<{ retried: number[]; parked: number[] }> };
      const sum = (k: 'retried' | 'parked'): number => history.consumers.flatMap((c) => c[k]).reduce((a, b) => a + b, 0);
      return sum('retried') === 2 && sum('parked') === 2;
    }, 'the flaky payment retried twice', 30_000);
    await page.locator('canvas').first().waitFor({ state: 'visible' });
    await row.first().click();
    await page.getByText('amount 210.23 is over the 100.00 limit').nth(1).waitFor(); // the selected group, below the table
    await new Promise((resolve) => setTimeout(resolve, 6000)); // the next refresh (every 5 s) draws the retries
    mkdirSync(IMAGES, { recursive: true });
    await page.screenshot({ path: path.join(IMAGES, 'operator-dashboard.png') });

    // The replay: the consumer paused first, so the replayed payments wait in the main queue.
    const paused = await red!.api('POST', '/inject/e2e-pause');
    assert.equal(paused.status, 200);
    await waitFor(async () => (await broker.consumerCount(names.main)) === 0, 'the consumer paused');
    await page.getByRole('button', { name: 'Replay group' }).click();
    const question = page.getByText('Replay the 2 parked messages of “amount 210.23 is over the 100.00 limit” to where they were first published, with their attempts reset?');
    await question.waitFor({ timeout: 30_000 });
    assert.equal(await broker.messageCount(names.parking), 2, 'nothing replayed before the confirmation');
    await page.getByRole('button', { name: 'Yes, do it' }).click();
    await page
      .getByText('Replayed 2, 0 left in parking.')
      .waitFor({ timeout: 30_000 })
      .catch((err: unknown) => {
        throw new Error(`${String(err)}${red!.log()}`);
      });
    await waitFor(async () => (await broker.messageCount(names.main)) === 2, 'the replayed payments in the main queue');
    assert.equal(await broker.messageCount(names.parking), 0);
    await row.first().waitFor({ state: 'detached', timeout: 30_000 });
    // In the audit log, with what, where and how many.
    await waitFor(() => Promise.resolve(red!.lines().some((l) => l.includes('[audit]') && l.includes('rabbitmq-retry.replay') && l.includes(`"queue":"${names.parking}"`) && l.includes('"count":2'))), 'the replay in the audit log');
    assert.deepEqual(pageErrors, []);
  });
});
