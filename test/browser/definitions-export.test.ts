/**
 * "Export definitions" in the retry-config dialog, in a real browser: Debian's chromium, driven by
 * playwright-core, against a Node-RED 4.1 started by the test with the PACKED package (as
 * editor.test.ts does). The dialog's unsaved values come back as a download the browser saves.
 * Screenshot into docs/images/ with UPDATE_SCREENSHOTS=1, otherwise into a temp dir.
 *
 * Without /usr/bin/chromium (or CHROMIUM_PATH) the suite is skipped on a developer machine and FAILS
 * under CI=true: .ci/run installs chromium with apt.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { RabbitDefinitions } from '../../src/lib/topology';
import { NodeRedProcess, packPackage, repoPackage, userDirWith } from '../helpers/node-red-process';
import { nodeRed4 } from '../e2e/node-red-runtimes';
import { needChromium } from '../helpers/skips';
import { serviceUrls } from '../../scripts/services.mjs';

const CHROMIUM = serviceUrls(process.env).chromium;
const IMAGES = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(__dirname, '../../docs/images') : path.join(os.tmpdir(), 'rabbitmq-retry-screenshots');

/** The browser's globals the test reads; typed loosely on purpose, they only run in the page. */
interface PageRED {
  nodes: { getType(type: string): unknown };
  editor: { editConfig(name: string, type: string, id: string): void };
  view: { importNodes(nodes: unknown[], options?: Record<string, unknown>): void };
  tray: { close(): void };
}
declare const RED: PageRED;

describe('retry-config dialog: Export definitions (chromium, packed package, Node-RED 4.1)', function () {
  this.timeout(180_000);
  const tempDirs: string[] = [];
  let red: NodeRedProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const pageErrors: string[] = [];

  /** Shows a tab of the retry-config dialog; Node-RED's tabs may swallow a click taken for a double click. */
  async function tab(id: 'topology' | 'policy'): Promise<void> {
    const pane = page.locator(`#retry-config-tab-${id}`);
    for (let i = 0; i < 10 && !(await pane.isVisible()); i++) {
      await page.locator(`#retry-config-tabs a[href="#retry-config-tab-${id}"]`).click();
      await pane.waitFor({ state: 'visible', timeout: 500 }).catch(() => undefined);
    }
    await pane.waitFor({ state: 'visible' });
  }

  async function fill(field: string, value: string): Promise<void> {
    await page.locator(`#node-config-input-${field}`).fill(value);
    await page.locator(`#node-config-input-${field}`).dispatchEvent('change');
  }

  before(async function () {
    needChromium(this);
    const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    tempDirs.push(packDir);
    const userDir = await userDirWith(await packPackage(packDir));
    tempDirs.push(userDir);
    red = await NodeRedProcess.start({ launch: await nodeRed4.prepare(), userDir });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (err) => pageErrors.push(`uncaught: ${err.message}`));
    await page.goto(red.base);
    const types = Object.keys(repoPackage['node-red'].nodes);
    await page.waitForFunction((all) => typeof RED !== 'undefined' && all.every((type) => !!RED.nodes?.getType?.(type)), types, { timeout: 60_000 });
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed' || !browser) return;
    const file = path.join(os.tmpdir(), `rmq-retry-browser-failure-${Date.now()}.png`);
    await page.screenshot({ path: file }).catch(() => undefined);
    console.log(`screenshot of the failure: ${file}`);
  });

  after(async function () {
    await browser?.close();
    await red?.stop();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });

  it("downloads the dialog's unsaved topology as definitions.json in the broker's vhost, and says why it cannot", async function () {
    // Never deployed: the export reads the dialog, not the runtime's flows, and touches no broker.
    await page.evaluate(() => {
      RED.view.importNodes(
        [
          { id: 'export-broker', type: 'retry-broker', name: 'export broker', host: '127.0.0.1', port: '5672', vhost: 'shop' },
          { id: 'export-config', type: 'retry-config', name: 'export', broker: 'export-broker', mode: 'check', mainQueue: 'orders', retryDelay: '5000', maxAttempts: '3' },
        ],
        { generateIds: false, addFlow: false },
      );
      RED.editor.editConfig('', 'retry-config', 'export-config');
    });
    await page.locator('#node-config-dialog-ok').waitFor({ state: 'visible' });
    await tab('topology');
    await fill('mainQueue', 'invoices');
    await fill('mainExchange', 'billing');
    await page.locator('#node-config-input-mainExchangeType').selectOption('topic');
    await fill('routingKeys', 'invoice.created,invoice.*');
    await tab('policy');
    await fill('retryDelay', '1s, 10s');

    const button = page.locator('#retry-config-export-button');
    assert.equal(((await button.textContent()) ?? '').trim(), 'Export definitions');
    assert.match((await button.getAttribute('title')) ?? '', /rabbitmqctl import_definitions/);
    const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
    assert.equal(download.suggestedFilename(), 'invoices-definitions.json');
    const saved = await download.path();
    assert.ok(saved, 'the download was not saved');
    const defs = JSON.parse(readFileSync(saved, 'utf8')) as RabbitDefinitions;
    assert.deepEqual(defs.vhosts, [{ name: 'shop' }]);
    assert.deepEqual(defs.queues.map((q) => [q.name, q.arguments['x-message-ttl']]), [['invoices', undefined], ['invoices.retry.1s', 1000], ['invoices.retry.10s', 10_000], ['invoices.parking', undefined]]);
    assert.deepEqual(defs.exchanges.map((x) => [x.name, x.type]), [['billing', 'topic']]);
    assert.deepEqual(defs.bindings.map((b) => `${b.source}>${b.destination}:${b.routing_key}`), ['billing>invoices:invoice.created', 'billing>invoices:invoice.*']);
    const done = page.locator('#retry-config-check-result .retry-config-export-done');
    await done.waitFor({ state: 'visible' });
    assert.match((await done.textContent()) ?? '', /invoices-definitions\.json/);
    await page.mouse.move(0, 0);
    // The import's "imported 2 configuration nodes" notification would cover the tray's title.
    await page.locator('.red-ui-notification').first().waitFor({ state: 'detached', timeout: 20_000 }).catch(() => undefined);
    // The policy tab grew (jitter, error kinds): the picture is of the buttons and what the export said, scrolled to them.
    await done.evaluate((el) => el.scrollIntoView({ block: 'end' }));
    mkdirSync(IMAGES, { recursive: true });
    await page.locator('.red-ui-tray').first().screenshot({ path: path.join(IMAGES, 'export-definitions.png') });

    // An invalid definition: the validator's sentence instead of a file.
    await tab('topology');
    await fill('mainQueue', 'amq.invoices');
    await button.click();
    const failed = page.locator('#retry-config-check-result .retry-config-check-failed');
    await failed.waitFor({ state: 'visible' });
    assert.match((await failed.textContent()) ?? '', /^Export failed: .*amq\./);

    await page.locator('#node-config-dialog-cancel').click();
    assert.deepEqual(pageErrors.filter((e) => !/400 \(Bad Request\)/.test(e)), []);
  });
});
