/**
 * The parking browser's console in a real browser (Debian's chromium, playwright-core) against a
 * Node-RED 4.1 with the PACKED package: a group redirected to another queue through "Replay to…", and a
 * paced replay that stops when its canary is parked again, its progress shown at the top of the tab.
 * Screenshots go to docs/images/ with UPDATE_SCREENSHOTS=1, else to a temp dir.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { AMQP_URL, Broker, MANAGEMENT_URL, uniqueName, waitFor } from '../helpers/broker';
import { NodeRedProcess, packPackage, repoPackage, userDirWith } from '../helpers/node-red-process';
import { nodeRed4 } from '../e2e/node-red-runtimes';
import { needChromium } from '../helpers/skips';
import { serviceUrls } from '../../scripts/services.mjs';

const CHROMIUM = serviceUrls(process.env).chromium;
const IMAGES = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(__dirname, '../../docs/images') : path.join(os.tmpdir(), 'rabbitmq-retry-screenshots');

interface PageRED {
  nodes: { getType(type: string): unknown; node(id: string): unknown };
  sidebar: { show(id: string): void };
}
declare const RED: PageRED;

describe('parking console in a real browser: redirect a group, a paced replay stopped by its canary (chromium, packed package)', function () {
  this.timeout(240_000);
  const dirs: string[] = [];
  let red: NodeRedProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let broker: Broker;
  let pageErrors: string[] = [];

  async function screenshot(name: string): Promise<void> {
    mkdirSync(IMAGES, { recursive: true });
    await page.locator('#red-ui-sidebar').first().screenshot({ path: path.join(IMAGES, name) });
  }

  /** Deploys `flow` over everything; `ready` waits for what it starts (its queues). */
  async function deploy(flow: unknown[], ready: () => Promise<void> = () => Promise.resolve()): Promise<void> {
    // No editor open meanwhile: its parking tab would look at the configuration this deploy replaces.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.goto('about:blank');
    const deployed = await red!.api('POST', '/flows', flow, { 'Node-RED-Deployment-Type': 'full' });
    assert.ok(deployed.ok, `deploy: ${deployed.status} ${await deployed.text()}`);
    await ready();
  }

  /** Reloads the editor and opens the parking tab on `config`. */
  async function open(config: string): Promise<void> {
    await page.goto(red!.base);
    await page.waitForFunction((id) => typeof RED !== 'undefined' && !!RED.nodes?.node?.(id), config, { timeout: 60_000 });
    await page.evaluate(() => RED.sidebar.show('rabbitmq-retry-parking'));
    await page.locator('#rmq-parking-config').selectOption(config);
  }

  before(async function () {
    needChromium(this);
    broker = await Broker.open();
    const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    dirs.push(packDir);
    const userDir = await userDirWith(await packPackage(packDir));
    dirs.push(userDir);
    red = await NodeRedProcess.start({ launch: await nodeRed4.prepare(), userDir, env: { AMQP_URL, RABBITMQ_MANAGEMENT_URL: MANAGEMENT_URL } });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (err) => pageErrors.push(`uncaught: ${err.message}`));
    page.on('response', (r) => {
      if (r.status() >= 500) pageErrors.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(red.base);
    const types = Object.keys(repoPackage['node-red'].nodes);
    await page.waitForFunction((all) => typeof RED !== 'undefined' && all.every((type) => !!RED.nodes?.getType?.(type)), types, { timeout: 60_000 });
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed' || !browser) return;
    const file = path.join(os.tmpdir(), `rmq-retry-console-failure-${Date.now()}.png`);
    await page.screenshot({ path: file }).catch(() => undefined);
    console.log(`screenshot of the failure: ${file}${red?.log() ?? ''}`);
  });

  after(async () => {
    await browser?.close();
    await red?.stop();
    await broker?.cleanup();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    const errors = pageErrors;
    pageErrors = [];
    assert.deepEqual(errors, []);
  });

  it('redirects a group to another queue through "Replay to…": confirmed, the copies say who and when, the rest stays parked', async function () {
    const names = { main: uniqueName('ui-redirect-main'), parking: uniqueName('ui-redirect-parking'), fixer: uniqueName('ui-redirect-fixer') };
    broker.track('queue', ...Object.values(names));
    const ch = await broker.ch();
    for (const queue of Object.values(names)) await ch.assertQueue(queue, { durable: true });
    for (const [i, reason] of ['amount 12 is over the 10 limit', 'timeout after 5000ms', 'amount 99 is over the 50 limit'].entries()) {
      await broker.publish('', names.parking, { n: i }, { messageId: `ui-redirect-${i}`, headers: { 'park-reason': reason, 'park-time': new Date().toISOString(), 'park-original-exchange': '', 'park-original-routing-key': names.main } });
    }
    await deploy([
      { id: 'rd-broker', type: 'retry-broker', name: 'redirect broker', url: AMQP_URL },
      { id: 'rd-config', type: 'retry-config', name: 'redirect test', broker: 'rd-broker', mode: 'check', mainQueue: names.main, parkingQueue: names.parking, retryDelay: '1000', maxAttempts: '3' },
    ]);
    await open('rd-config');
    await page.locator('#rmq-parking-view-groups').click();
    try {
      const group = page.locator('.rmq-parking-group[data-key="amount {n} is over the {n} limit"]');
      await group.waitFor({ state: 'visible' });
      await group.locator('.rmq-parking-group-replay-to').click();
      await page.locator('#rmq-replay-to-confirm').waitFor({ state: 'visible' });
      assert.match((await page.locator('.rmq-replay-to-what').textContent()) ?? '', /The 2 messages of the group “amount \{n\} is over the \{n\} limit”/);
      await page.locator('#rmq-replay-to-redirect').check();
      await page.locator('#rmq-replay-to-routing-key').fill(names.fixer);
      await page.locator('#rmq-replay-to-confirm').click();
      await waitFor(async () => (await broker.messageCount(names.fixer)) === 2, 'the group in the fixer queue');
      assert.equal(await broker.messageCount(names.main), 0, 'nothing went back to the main queue');
      await waitFor(async () => (await broker.messageCount(names.parking)) === 1, 'the other message still parked');
      const copy = await broker.take(names.fixer);
      assert.equal(copy.properties.messageId, 'ui-redirect-0');
      assert.equal(copy.properties.headers?.['replayed-by'], 'admin API');
      assert.equal(copy.properties.headers?.['replay-redirected-to'], `(default exchange) / ${names.fixer}`);
      await waitFor(async () => (await page.locator('.rmq-parking-group').count()) === 1, 'one group left');
    } finally {
      await page.locator('#rmq-parking-view-list').click();
    }
  });

  it('runs a paced replay from the list, shows its progress, and stops it when its canary is parked again', async function () {
    const base = uniqueName('ui-paced');
    const names = { exchange: `${base}.main-exchange`, main: `${base}.main`, retryExchange: `${base}.retry-exchange`, retry: `${base}.retry`, parking: `${base}.parking` };
    broker.track('queue', names.main, names.retry, names.parking);
    broker.track('exchange', names.exchange, names.retryExchange);
    const flow = [
      { id: 'pc-tab', type: 'tab', label: 'paced' },
      { id: 'pc-broker', type: 'retry-broker', name: 'paced broker', url: AMQP_URL },
      {
        id: 'pc-config',
        type: 'retry-config',
        name: 'paced test',
        broker: 'pc-broker',
        mode: 'declare',
        mainExchange: names.exchange,
        mainExchangeType: 'direct',
        mainQueue: names.main,
        routingKeys: 'rk',
        retryExchange: names.retryExchange,
        retryExchangeType: 'fanout',
        retryQueue: names.retry,
        retryDelay: '500',
        parkingQueue: names.parking,
        maxAttempts: '3',
        mainQueueArgs: '{}',
        retryQueueArgs: '{}',
        parkingQueueArgs: '{}',
      },
      // Still broken: every message is parked at once, a replayed one too.
      { id: 'pc-consumer', type: 'retry-consumer', z: 'pc-tab', config: 'pc-config', prefetch: '10', settleTimeout: '60', decode: 'auto', invalidBody: 'park', wires: [['pc-fail']] },
      { id: 'pc-fail', type: 'function', z: 'pc-tab', func: "msg.error = 'payment service still down'; return msg;", outputs: 1, wires: [['pc-park']] },
      { id: 'pc-park', type: 'park-publisher', z: 'pc-tab', wires: [[]] },
    ];
    // The consumer declares the queues: the parking tab opens once they are there.
    await deploy(flow, () => waitFor(async () => (await broker.exists('queue', names.parking)) && (await broker.consumerCount(names.main)) === 1, 'the consumer'));
    await open('pc-config');
    for (let i = 1; i <= 4; i += 1) await broker.publish(names.exchange, 'rk', { order: i }, { messageId: `ui-paced-${i}` });
    await waitFor(async () => (await broker.messageCount(names.parking)) === 4, 'four parked');
    await page.locator('#rmq-parking-refresh').click();
    await waitFor(async () => (await page.locator('tr.rmq-parking-row').count()) === 4, 'four listed');

    // Nothing ticked, no search: every parked message, paced, one canary.
    await page.locator('#rmq-parking-replay-to').click();
    await page.locator('#rmq-replay-to-confirm').waitFor({ state: 'visible' });
    await page.locator('#rmq-replay-to-paced').check();
    await page.locator('#rmq-replay-to-rate').fill('2');
    await page.locator('#rmq-replay-to-canary').fill('1');
    await page.locator('#rmq-replay-to-canary-wait').fill('6');
    await page.locator('#rmq-replay-to-confirm').click();

    const job = page.locator('.rmq-parking-job').first();
    await waitFor(async () => (await job.getAttribute('data-state').catch(() => null)) === 'waiting', 'the paced replay waiting for its canary', 60_000);
    assert.match((await job.textContent()) ?? '', /waiting for the canaries · 1 replayed at 2\/s · canaries 1\/1 · not looked yet/);
    assert.equal(await job.locator('.rmq-parking-job-cancel').count(), 1, 'a running replay can be cancelled');
    await screenshot('parking-paced-replay.png');

    await waitFor(async () => (await job.getAttribute('data-state').catch(() => null)) === 'stopped', 'the paced replay stopped by its canary', 60_000);
    const text = (await job.textContent()) ?? '';
    assert.match(text, /STOPPED/);
    assert.match(text, /parked again: 1/);
    assert.match(text, /1 of the 1 canary messages were parked again: the rest were not replayed/);
    assert.equal(await job.locator('.rmq-parking-job-cancel').count(), 0);
    await screenshot('parking-paced-stopped.png');
    // The canary is parked again (last, with its replay id); the other three were never replayed.
    assert.equal(await broker.messageCount(names.parking), 4);
    const last = (await (await red!.api('GET', '/rabbitmq-retry/parking/pc-config')).json()) as { messages: Array<{ messageId: string; replays: number }> };
    assert.deepEqual(last.messages.map((m) => `${m.messageId}×${m.replays}`), ['ui-paced-2×0', 'ui-paced-3×0', 'ui-paced-4×0', 'ui-paced-1×1']);
  });
});
