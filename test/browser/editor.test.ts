/**
 * The editor in a real browser: Debian's chromium, driven by playwright-core, against a Node-RED
 * 4.1 started by the test with the PACKED package in a fresh user directory (see
 * ../e2e/node-red-process.ts). Takes the README's screenshots: into docs/images/ with
 * UPDATE_SCREENSHOTS=1 (to commit them), otherwise into a temp dir so a test run leaves the tree clean.
 *
 * Without /usr/bin/chromium (or CHROMIUM_PATH) the suite is skipped on a developer machine and FAILS
 * under CI=true: .ci/run installs chromium with apt.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { AMQP_URL, Broker, MANAGEMENT_URL, uniqueName, waitFor } from '../helpers/broker';
import { NodeRedProcess, packPackage, PACKAGE, repoPackage, userDirWith } from '../helpers/node-red-process';
import { nodeRed4 } from '../e2e/node-red-runtimes';
import { needChromium } from '../helpers/skips';
import { serviceUrls } from '../../scripts/services.mjs';
import { statusKey } from '../../src/nodes/shared/i18n';
import { PROPERTY_VERSIONS } from '../../src/migrate/node-tables';
const root = path.resolve(__dirname, '../..');

const CHROMIUM = serviceUrls(process.env).chromium;
const IMAGES = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(__dirname, '../../docs/images') : path.join(os.tmpdir(), 'rabbitmq-retry-screenshots');
const CONFIG_TYPES = ['retry-broker', 'retry-config', 'retry-dedupe', 'retry-postgres'];
const FLOW_TYPES = Object.keys(repoPackage['node-red'].nodes).filter((t) => !CONFIG_TYPES.includes(t));

/** The browser's globals the tests read; typed loosely on purpose, they only run in the page. */
interface EditorNode {
  id: string;
  type: string;
  valid?: boolean;
}
interface PageRED {
  nodes: {
    getType(type: string): unknown;
    eachNode(cb: (n: EditorNode) => void): void;
    eachConfig(cb: (n: EditorNode) => void): void;
    node(id: string): EditorNode;
  };
  editor: { edit(node: EditorNode): void; editConfig(name: string, type: string, id: string): void };
  view: { importNodes(nodes: unknown[], options?: Record<string, unknown>): void };
}
declare const RED: PageRED;

/**
 * Waits until the editor has registered every node type of the package: Node-RED loads the node sets
 * one after the other, so one type being there says nothing of the others.
 */
async function editorLoaded(page: Page): Promise<void> {
  const types = Object.keys(repoPackage['node-red'].nodes);
  await page.waitForFunction((all) => typeof RED !== 'undefined' && all.every((type) => !!RED.nodes?.getType?.(type)), types, { timeout: 60_000 });
}

describe('editor in a real browser (chromium + playwright-core, packed package, Node-RED 4.1)', function () {
  this.timeout(180_000);
  const tempDirs: string[] = [];
  let red: NodeRedProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let broker: Broker;
  /** Console errors and uncaught exceptions of the page since the last check. */
  let pageErrors: string[] = [];

  function takeErrors(): string[] {
    const errors = pageErrors;
    pageErrors = [];
    return errors;
  }

  async function screenshot(name: string, selector?: string): Promise<void> {
    mkdirSync(IMAGES, { recursive: true });
    const file = path.join(IMAGES, name);
    if (selector) await page.locator(selector).first().screenshot({ path: file });
    else await page.screenshot({ path: file });
  }

  /** Opens a node's edit tray (a config node's too) and waits for its form. */
  async function openEditor(id: string, type: string): Promise<void> {
    const config = CONFIG_TYPES.includes(type);
    await page.evaluate(
      ({ id, type, config }) => (config ? RED.editor.editConfig('', type, id) : RED.editor.edit(RED.nodes.node(id))),
      { id, type, config },
    );
    await page.locator(config ? '#node-config-dialog-ok' : '#node-dialog-ok').waitFor({ state: 'visible' });
  }

  async function closeEditor(type: string, button: 'ok' | 'cancel' = 'cancel'): Promise<void> {
    const selector = CONFIG_TYPES.includes(type) ? `#node-config-dialog-${button}` : `#node-dialog-${button}`;
    await page.locator(selector).click();
    await page.locator(selector).waitFor({ state: 'detached' });
  }

  /** Shows a tab of a config dialog (`retry-config-tab-policy`, …). */
  async function tab(id: 'connection' | 'topology' | 'policy' | 'security' | 'advanced', dialog: 'retry-config' | 'retry-broker' = 'retry-config'): Promise<void> {
    // Node-RED's tabs take two clicks on tabs within 400 ms for a double click and ignore the
    // second: click again until the pane shows.
    const pane = page.locator(`#${dialog}-tab-${id}`);
    for (let i = 0; i < 10 && !(await pane.isVisible()); i++) {
      await page.locator(`#${dialog}-tabs a[href="#${dialog}-tab-${id}"]`).click();
      await pane.waitFor({ state: 'visible', timeout: 500 }).catch(() => undefined);
    }
    await pane.waitFor({ state: 'visible' });
  }

  /** Waits until Node-RED marks the input invalid (its `input-error` class), or valid. */
  async function markedInvalid(selector: string, invalid: boolean): Promise<void> {
    const input = page.locator(selector);
    await waitFor(async () => ((await input.getAttribute('class')) ?? '').split(/\s+/).includes('input-error') === invalid, `${selector} marked ${invalid ? 'invalid' : 'valid'}`);
  }

  async function typeAndCheck(selector: string, value: string, invalid: boolean): Promise<void> {
    await page.locator(selector).fill(value);
    await page.locator(selector).dispatchEvent('change');
    await markedInvalid(selector, invalid);
  }

  /** A typedInput's parts: Node-RED hides the field's own input and shows a container after it. */
  const typedInput = (field: string) => {
    const container = page.locator(`#node-config-input-${field} + .red-ui-typedInput-container`);
    return { container, input: container.locator('input.red-ui-typedInput-input'), typeButton: container.locator('button.red-ui-typedInput-type-select') };
  };

  /** Types into a typedInput and waits until Node-RED marks the field (and its container) invalid, or valid. */
  async function typeTypedAndCheck(field: string, value: string, invalid: boolean): Promise<void> {
    const { input } = typedInput(field);
    await input.fill(value);
    await input.dispatchEvent('change');
    await markedInvalid(`#node-config-input-${field}`, invalid);
    await markedInvalid(`#node-config-input-${field} + .red-ui-typedInput-container`, invalid);
  }

  async function ourNodes(): Promise<EditorNode[]> {
    // No named functions in here: tsx would wrap them in a helper the page does not have.
    return page.evaluate(() => {
      const out: EditorNode[] = [];
      RED.nodes.eachConfig((n) => {
        if (/^(retry-|park-|outbox-)/.test(n.type)) out.push({ id: n.id, type: n.type, valid: n.valid });
      });
      RED.nodes.eachNode((n) => {
        if (/^(retry-|park-|outbox-)/.test(n.type)) out.push({ id: n.id, type: n.type, valid: n.valid });
      });
      return out;
    });
  }

  /**
   * Deploys, over everything, a broker and a check-mode retry config `<id>-config` (no consumer) on a
   * main and a parking queue created here: what the parking browser and the dialogs work on.
   */
  async function deployCheckConfig(id: string, queues: string, label: string): Promise<{ main: string; parking: string }> {
    const names = { main: uniqueName(`${queues}-main`), parking: uniqueName(`${queues}-parking`) };
    broker.track('queue', names.main, names.parking);
    const ch = await broker.ch();
    await ch.assertQueue(names.main, { durable: true });
    await ch.assertQueue(names.parking, { durable: true });
    const flow = [
      { id: `${id}-broker`, type: 'retry-broker', name: 'test broker', url: AMQP_URL },
      { id: `${id}-config`, type: 'retry-config', name: label, broker: `${id}-broker`, mode: 'check', mainQueue: names.main, parkingQueue: names.parking, retryDelay: '1000', maxAttempts: '3' },
    ];
    const deployed = await red!.api('POST', '/flows', flow, { 'Node-RED-Deployment-Type': 'full' });
    assert.ok(deployed.ok, `deploy: ${deployed.status} ${await deployed.text()}`);
    return names;
  }

  before(async function () {
    needChromium(this);
    broker = await Broker.open();
    const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    tempDirs.push(packDir);
    const userDir = await userDirWith(await packPackage(packDir));
    tempDirs.push(userDir);
    red = await NodeRedProcess.start({ launch: await nodeRed4.prepare(), userDir, env: { AMQP_URL, RABBITMQ_MANAGEMENT_URL: MANAGEMENT_URL } });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (err) => pageErrors.push(`uncaught: ${err.message}`));
    await page.goto(red.base);
    await editorLoaded(page);
    await page.locator('#red-ui-palette-container-RabbitMQ_retry').waitFor({ state: 'attached' });
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed' || !browser) return;
    // What the page looked like, for the failure report; and no tray left open for the next test.
    const file = path.join(os.tmpdir(), `rmq-retry-browser-failure-${Date.now()}.png`);
    await page.screenshot({ path: file }).catch(() => undefined);
    console.log(`screenshot of the failure: ${file}`);
    await page.evaluate(() => {
      for (let i = 0; i < 5; i++) (RED as unknown as { tray: { close(): void } }).tray.close();
    });
  });

  after(async function () {
    await browser?.close();
    await red?.stop();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    await broker?.cleanup();
  });

  it('shows every node of the package in the palette, with no console error on load', async function () {
    for (const type of FLOW_TYPES) {
      const node = page.locator(`#red-ui-palette-container-RabbitMQ_retry .red-ui-palette-node[data-palette-type="${type}"]`);
      await node.waitFor({ state: 'attached' }).catch(() => undefined);
      assert.equal(await node.count(), 1, `${type} is not in the palette`);
    }
    assert.equal(await page.evaluate('typeof window.RabbitmqRetry'), 'object', `resources/${PACKAGE}/editor.js did not load`);
    // The package's own icons, served from the installed package.
    const style = (await page.locator('.red-ui-palette-node[data-palette-type="retry-consumer"] .red-ui-palette-icon').getAttribute('style')) ?? '';
    assert.match(style, new RegExp(`icons/${PACKAGE}/rabbitmq-retry-consumer\\.svg`), style);
    const icon = await red!.api('GET', `/icons/${PACKAGE}/rabbitmq-retry-consumer.svg`);
    assert.equal(icon.status, 200);
    assert.match(await icon.text(), /^<svg/);
    await page.locator('#red-ui-palette-container-RabbitMQ_retry').scrollIntoViewIfNeeded();
    await screenshot('palette.png', '#red-ui-palette-RabbitMQ_retry, #red-ui-palette-container-RabbitMQ_retry');
    assert.deepEqual(takeErrors(), []);
  });

  it('imports the example from the menu (Import ▸ Examples)', async function () {
    await page.locator('#red-ui-header-button-sidemenu').click();
    await page.locator('#menu-item-import').click();
    await page.getByRole('link', { name: 'Examples' }).click();
    const examples = page.locator('#red-ui-clipboard-dialog-import-tab-examples');
    await examples.getByText(PACKAGE, { exact: true }).click();
    await examples.locator('li').filter({ has: page.getByText(PACKAGE, { exact: true }) }).last().getByText('flows', { exact: true }).click();
    await page.locator('#red-ui-clipboard-dialog-ok').click();
    await page.mouse.click(700, 500); // drop the imported nodes on the workspace
    await page.waitForFunction(() => {
      let found = false;
      RED.nodes.eachNode((n) => {
        found ||= n.type === 'retry-consumer';
      });
      return found;
    });
    const nodes = await ourNodes();
    const demo = JSON.parse(readFileSync(path.join(root, 'examples', 'flows.json'), 'utf8')) as Array<{ type: string }>;
    const ours = new Set(Object.keys(repoPackage['node-red'].nodes));
    assert.deepEqual([...new Set(nodes.map((n) => n.type))].sort(), [...new Set(demo.map((n) => n.type).filter((type) => ours.has(type)))].sort());
    assert.deepEqual(nodes.filter((n) => n.valid === false), [], 'the example imports with invalid nodes');
    assert.deepEqual(takeErrors(), []);
  });

  it('opens the edit dialog of every node type without a console error', async function () {
    // The orders example holds the node types the demo does not (deduplication, PostgreSQL, the outbox).
    const orders = JSON.parse(readFileSync(path.join(root, 'examples', 'orders-outbox.json'), 'utf8')) as unknown[];
    await page.evaluate((flow) => {
      RED.view.importNodes(flow, { generateIds: true, addFlow: false });
    }, orders);
    // The operator's console is in the Dashboard 2.0 example only, whose widgets this Node-RED lacks: on its own.
    await page.evaluate(() => RED.view.importNodes([{ id: 'ui-console', type: 'retry-console', name: 'console', x: 300, y: 600, wires: [[], [], [], [], []] }], { addFlow: false }));
    const seen = new Set<string>();
    for (const node of await ourNodes()) {
      if (seen.has(node.type)) continue;
      seen.add(node.type);
      await openEditor(node.id, node.type);
      await closeEditor(node.type);
      assert.deepEqual(takeErrors(), [], `editing ${node.type}`);
    }
    assert.equal(seen.size, Object.keys(repoPackage['node-red'].nodes).length);
  });

  it('marks a bad value invalid and accepts a good one', async function () {
    const config = (await ourNodes()).find((n) => n.type === 'retry-config');
    assert.ok(config);
    await openEditor(config.id, config.type);
    await tab('topology');
    await typeAndCheck('#node-config-input-mainQueue', 'amq.reserved', true);
    await typeAndCheck('#node-config-input-mainQueue', 'orders', false);
    await tab('policy');
    await typeAndCheck('#node-config-input-retryDelay', '1s, soon', true);
    await typeAndCheck('#node-config-input-retryDelay', '1s, 10s', false);
    await closeEditor(config.type);
    assert.deepEqual(takeErrors(), []);
  });

  it("shows the consumer's batch fields only with batch mode ticked in retry mode, and checks the batch size as the runtime does", async function () {
    const consumer = (await ourNodes()).find((n) => n.type === 'retry-consumer');
    assert.ok(consumer);
    await openEditor(consumer.id, consumer.type);
    const size = page.locator('#node-input-batchSize');
    await page.locator('#node-input-mode').selectOption('retry');
    if (await page.locator('#node-input-batch').isChecked()) await page.locator('#node-input-batch').click();
    assert.equal(await size.isVisible(), false, 'hidden while batch mode is off');
    await page.locator('#node-input-batch').click();
    await size.waitFor({ state: 'visible' });
    await typeAndCheck('#node-input-batchSize', '20000', true);
    await typeAndCheck('#node-input-batchSize', '500', false);
    // The picture (docs/nodes/retry-consumer.md#batch-mode): the batch fields and their tip in view.
    await page.locator('.form-tips.retry-consumer-batch').evaluate((el) => el.scrollIntoView({ block: 'end' }));
    await page.locator('.red-ui-notification').evaluateAll((notes) => notes.forEach((note) => note.remove())); // an earlier test's
    await screenshot('retry-consumer-batch.png', '.red-ui-tray');
    await page.locator('#node-input-mode').selectOption('ordered');
    await size.waitFor({ state: 'hidden' });
    await closeEditor(consumer.type);
    assert.deepEqual(takeErrors(), []);
  });

  it('offers the env type for the broker URL, host and management URL, and marks a bad variable name invalid', async function () {
    const brokerNode = (await ourNodes()).find((n) => n.type === 'retry-broker');
    assert.ok(brokerNode);
    await openEditor(brokerNode.id, brokerNode.type);
    for (const field of ['url', 'host']) {
      // The typedInput's type menu lists `env`; choosing it sets the hidden <field>Type the node saves.
      await typedInput(field).typeButton.click();
      const env = page.locator('.red-ui-typedInput-options:visible a[value="env"]');
      await env.waitFor({ state: 'visible' });
      await env.click();
      await env.waitFor({ state: 'hidden' });
      assert.equal(await page.locator(`#node-config-input-${field}Type`).inputValue(), 'env', field);
    }
    await typeTypedAndCheck('url', 'amqp://not-a-variable-name', true);
    await typeTypedAndCheck('url', 'AMQP_URL', false);
    await typeTypedAndCheck('host', 'MQ HOST', true);
    await typeTypedAndCheck('host', 'MQ_HOST', false);
    // The management API URL sits with the connection (check mode needs it to compare arguments).
    assert.equal(await typedInput('managementUrl').container.count(), 1);
    assert.ok(await page.locator('#retry-broker-tab-connection #node-config-input-managementUrl').count(), 'on the connection tab');
    await closeEditor(brokerNode.type);
    assert.deepEqual(takeErrors(), []);
  });

  it("shows why a field with an env type or JSON is red: the validator's message on the field, as core nodes show it", async function () {
    /** Hovers a typedInput's box and reads the tooltip Node-RED opens for it. */
    const reason = async (field: string): Promise<string> => {
      await page.mouse.move(0, 0);
      await page.locator('.red-ui-popover').waitFor({ state: 'detached' });
      await typedInput(field).container.hover();
      const tip = page.locator('.red-ui-popover');
      await tip.waitFor({ state: 'visible' });
      return (await tip.textContent()) ?? '';
    };
    const nodes = await ourNodes();
    const brokerNode = nodes.find((n) => n.type === 'retry-broker');
    const config = nodes.find((n) => n.type === 'retry-config');
    assert.ok(brokerNode && config);

    await openEditor(brokerNode.id, brokerNode.type);
    await typeTypedAndCheck('url', 'http://rabbit.example', true);
    assert.match(await reason('url'), /must start with amqp:\/\/ or amqps:\/\/, not http:\/\//);
    await screenshot('field-reason.png', '.red-ui-tray');
    // The env type: the value must name a variable.
    await typedInput('host').typeButton.click();
    const env = page.locator('.red-ui-typedInput-options:visible a[value="env"]');
    await env.click();
    await env.waitFor({ state: 'hidden' });
    await typeTypedAndCheck('host', 'MQ HOST', true);
    assert.match(await reason('host'), /name of an environment variable/);
    await typeTypedAndCheck('managementUrl', 'ftp://rabbit.example:15672', true);
    assert.match(await reason('managementUrl'), /http:\/\/ or https:\/\//);
    // Fixed, the field is no longer red and says nothing.
    await typeTypedAndCheck('managementUrl', 'http://rabbit.example:15672', false);
    await page.mouse.move(0, 0);
    await closeEditor(brokerNode.type);

    // JSON queue arguments: an argument the topology sets itself is refused in the dialog, saying why.
    await openEditor(config.id, config.type);
    await tab('topology');
    await typeTypedAndCheck('mainQueueArgs', '{"x-dead-letter-exchange": "other"}', true);
    assert.match(await reason('mainQueueArgs'), /x-dead-letter-exchange is set by the retry topology/);
    await typeTypedAndCheck('mainQueueArgs', '{"x-max-length": 1000}', false);
    await page.mouse.move(0, 0);
    await closeEditor(config.type);
    assert.deepEqual(takeErrors(), []);
  });

  it('checks the topology with the dialog values: a queue with other arguments shows expected vs actual', async function () {
    const names = { main: uniqueName('ui-main'), retry: uniqueName('ui-retry'), parking: uniqueName('ui-parking') };
    broker.track('queue', names.main, names.retry, names.parking);
    // The main queue exists, created elsewhere with another dead-letter exchange; the retry queue does not.
    const ch = await broker.ch();
    await ch.assertQueue(names.main, { durable: true, arguments: { 'x-dead-letter-exchange': 'somewhere-else', 'x-dead-letter-routing-key': names.retry } });
    await ch.assertQueue(names.parking, { durable: true });

    const nodes = await ourNodes();
    const brokerNode = nodes.find((n) => n.type === 'retry-broker');
    const config = nodes.find((n) => n.type === 'retry-config');
    assert.ok(brokerNode && config);
    // Unsaved edits of both config nodes: the check uses them, not what is deployed (nothing is).
    await openEditor(brokerNode.id, brokerNode.type);
    await tab('connection', 'retry-broker');
    await typedInput('managementUrl').input.fill(MANAGEMENT_URL);
    await typedInput('managementUrl').input.dispatchEvent('change');
    await closeEditor(brokerNode.type, 'ok');

    await openEditor(config.id, config.type);
    await page.locator('#node-config-input-mode').selectOption('check');
    await tab('topology');
    await page.locator('#node-config-input-mainQueue').fill(names.main);
    // Keys first: they hide once the main exchange is empty.
    await page.locator('#node-config-input-routingKeys').fill('');
    await page.locator('#node-config-input-mainExchange').fill('');
    await page.locator('#node-config-input-retryQueue').fill(names.retry);
    await page.locator('#node-config-input-retryExchange').fill('');
    await page.locator('#node-config-input-parkingQueue').fill(names.parking);
    await page.locator('#node-config-input-mainQueue').dispatchEvent('change');
    await screenshot('retry-config-dialog.png', '.red-ui-tray');

    await page.locator('#retry-config-check-button').click();
    const table = page.locator('#retry-config-check-result table');
    await table.waitFor({ state: 'visible' });
    const state = (kind: string, name: string): Promise<string | null> => table.locator(`tr[data-object="${kind}:${name}"]`).getAttribute('data-state');
    assert.equal(await state('queue', names.main), 'differs');
    assert.equal(await state('queue', names.retry), 'missing');
    assert.equal(await state('queue', names.parking), 'ok');
    const diff = await table.locator(`tr[data-object="queue:${names.main}"] .retry-config-check-diff`).allTextContents();
    assert.ok(
      diff.some((d) => d.includes('x-dead-letter-exchange') && d.includes("expected the default exchange ('')") && d.includes("'somewhere-else'")),
      `no expected-vs-actual line for x-dead-letter-exchange: ${JSON.stringify(diff)}`,
    );
    await page.locator('#retry-config-check-result').scrollIntoViewIfNeeded();
    await screenshot('check-topology.png', '.red-ui-tray');
    await closeEditor(config.type);
    assert.deepEqual(takeErrors(), []);
  });

  it("offers broker-native delayed retry only where the broker's version allows it: choosing it asks the broker", async function () {
    const version = ((await broker.ch()) as unknown as { connection: { serverProperties: { version: string } } }).connection.serverProperties.version;
    const [major = 0, minor = 0] = version.split('.').map(Number);
    const tooOld = major < 4 || (major === 4 && minor < 3);
    const config = (await ourNodes()).find((n) => n.type === 'retry-config');
    assert.ok(config);
    await openEditor(config.id, config.type);
    await tab('policy');
    const select = page.locator('#node-config-input-delayedRetry');
    // The queue type field (issue 53): classic or quorum; broker-native retry takes quorum with it.
    const queueType = page.locator('#node-config-input-queueType');
    assert.deepEqual(await queueType.locator('option').evaluateAll((options) => options.map((o) => o.getAttribute('value'))), ['classic', 'quorum']);
    await select.selectOption('broker');
    assert.equal(await queueType.inputValue(), 'quorum');
    // The check runs by itself and says the broker's version.
    await page.locator('#retry-config-check-result table, #retry-config-check-result .retry-config-check-failed').first().waitFor({ state: 'visible' });
    const note = page.locator('.retry-config-broker-too-old');
    if (tooOld) {
      await note.waitFor({ state: 'visible' });
      assert.match((await note.textContent()) ?? '', new RegExp(`RabbitMQ ${version.replace(/\./g, '\\.')}.*4\\.3`));
      await select.selectOption('queues');
      assert.equal(await select.locator('option[value="broker"]').isDisabled(), true, `RabbitMQ ${version}: the choice is disabled`);
    } else {
      assert.equal(await note.isVisible(), false);
      await select.selectOption('queues');
      assert.equal(await select.locator('option[value="broker"]').isDisabled(), false, `RabbitMQ ${version}: the choice stays`);
    }
    await closeEditor(config.type);
    assert.deepEqual(takeErrors(), []);
  });

  it('lists a parked message in the parking browser (peek, not consume) and replays it after a confirmation', async function () {
    // Deployed (the browser works on deployed configs): a broker and a retry config, no consumer.
    const names = await deployCheckConfig('ui', 'ui-park', 'parking test');
    await broker.publish('', names.parking, { order: 4711, amount: 210.23 }, {
      messageId: 'ui-parked-1',
      headers: {
        'park-reason': 'amount 210.23 is over the 100.00 limit',
        'park-time': new Date().toISOString(),
        'park-original-exchange': '',
        'park-original-routing-key': names.main,
        'retry-attempt': 3,
      },
    });
    page.once('dialog', (dialog) => void dialog.accept()); // "leave page?" for the unsaved example
    await page.reload();
    await page.waitForFunction(() => typeof RED !== 'undefined' && !!RED.nodes?.node?.('ui-config'), null, { timeout: 60_000 });

    await page.evaluate(() => (RED as unknown as { sidebar: { show(id: string): void } }).sidebar.show('rabbitmq-retry-parking'));
    await page.locator('#rmq-parking-config').selectOption('ui-config');
    const row = page.locator('tr.rmq-parking-row[data-message-id="ui-parked-1"]');
    await row.waitFor({ state: 'visible' });
    assert.match((await row.textContent()) ?? '', /over the 100\.00 limit/);
    assert.match((await row.textContent()) ?? '', /4711/);
    // Peeking returns each message it read (a requeue the broker counts a moment later).
    await waitFor(async () => (await broker.messageCount(names.parking)) === 1, 'the peeked message back in the parking queue');
    await screenshot('parking-browser.png', '#red-ui-sidebar');

    await row.locator('input.rmq-parking-pick').check();
    await page.locator('#rmq-parking-replay-selected').click();
    const question = page.locator('.red-ui-notification').filter({ has: page.locator('#rmq-parking-confirm') });
    assert.match((await question.textContent()) ?? '', /Replay 1 parked message to where it was first published, with its attempts reset\?/);
    await page.locator('.red-ui-notification button.primary').click();
    await waitFor(async () => (await broker.messageCount(names.main)) === 1, 'the replayed message in the main queue');
    await row.waitFor({ state: 'detached' });
    assert.equal(await broker.messageCount(names.parking), 0);
    assert.deepEqual(takeErrors(), []);
  });

  it('keeps the parking browser in view in a 1000 px window, refreshes it by itself, and shows a whole body (JSON, text, hex)', async function () {
    const names = await deployCheckConfig('ui-body', 'ui-body', 'body test');
    // A JSON body longer than the list's preview (1 KiB), and a binary one.
    const order = { order: 4712, items: Array.from({ length: 60 }, (_, i) => ({ sku: `sku-${i}`, quantity: i })), last: 'the end of the body' };
    await broker.publish('', names.parking, order, { messageId: 'ui-body-json', headers: { 'park-reason': 'too many items' } });
    await broker.publish('', names.parking, Buffer.from([0, 1, 2, 3, 0xfe, 0xff, 0x41]), { messageId: 'ui-body-bin', contentType: 'application/octet-stream', headers: { 'park-reason': 'not JSON' } });
    await page.setViewportSize({ width: 1000, height: 700 });
    try {
      await page.reload();
      await page.waitForFunction(() => typeof RED !== 'undefined' && !!RED.nodes?.node?.('ui-body-config'), null, { timeout: 60_000 });
      await page.evaluate(() => (RED as unknown as { sidebar: { show(id: string): void } }).sidebar.show('rabbitmq-retry-parking'));
      await page.locator('#rmq-parking-config').selectOption('ui-body-config');
      const row = (id: string) => page.locator(`tr.rmq-parking-row[data-message-id="${id}"]`);
      await row('ui-body-json').waitFor({ state: 'visible' });

      // Every control inside the window and inside the sidebar, none cut off.
      const sidebar = await page.locator('#red-ui-sidebar').boundingBox();
      assert.ok(sidebar);
      for (const selector of ['#rmq-parking-config', '#rmq-parking-refresh', '#rmq-parking-replay-selected', '#rmq-parking-replay-all', '#rmq-parking-purge-selected', '#rmq-parking-purge-all']) {
        const box = await page.locator(selector).boundingBox();
        assert.ok(box, `${selector} is not shown`);
        assert.ok(box.x >= sidebar.x && box.x + box.width <= Math.min(1000, sidebar.x + sidebar.width), `${selector} runs off the right edge: ${JSON.stringify(box)} in ${JSON.stringify(sidebar)}`);
        assert.ok(box.y >= sidebar.y && box.y + box.height <= Math.min(700, sidebar.y + sidebar.height), `${selector} is cut off at the bottom: ${JSON.stringify(box)} in ${JSON.stringify(sidebar)}`);
      }
      await screenshot('parking-browser-1000px.png');

      // Parked by someone else meanwhile: the open list shows it without a click.
      await broker.publish('', names.parking, 'parked later', { messageId: 'ui-body-late', contentType: 'text/plain', headers: { 'park-reason': 'late' } });
      await row('ui-body-late').waitFor({ state: 'visible', timeout: 30_000 });

      // The whole JSON body, pretty-printed, then as hex.
      await row('ui-body-json').locator('.rmq-parking-body-open').click();
      const text = page.locator('pre.rmq-parking-body-text');
      await text.waitFor({ state: 'visible' });
      assert.equal(await text.getAttribute('data-view'), 'json');
      assert.deepEqual(JSON.parse((await text.textContent()) ?? ''), order);
      assert.match((await text.textContent()) ?? '', /\n {2}"items": \[\n {4}\{\n {6}"sku": "sku-0",/);
      await screenshot('parking-body.png', '.red-ui-tray');
      await page.locator('#rmq-parking-body-view-hex').click();
      assert.equal(await text.getAttribute('data-view'), 'hex');
      assert.match((await text.textContent()) ?? '', /^00000000 {2}7b 22 6f 72 64 65 72 22 {2}3a 34 37 31 32 2c 22 69 {2}\|\{"order":4712,"i\|/);
      await page.locator('#rmq-parking-body-close').click();
      await text.waitFor({ state: 'detached' });

      // A binary body has only the hex view.
      await row('ui-body-bin').locator('.rmq-parking-body-open').click();
      await text.waitFor({ state: 'visible' });
      assert.equal(await text.getAttribute('data-view'), 'hex');
      assert.equal(await page.locator('#rmq-parking-body-view-json, #rmq-parking-body-view-text').count(), 0);
      assert.equal((await text.textContent()) ?? '', `00000000  00 01 02 03 fe ff 41${' '.repeat(23 - 20)}  ${' '.repeat(23)}  |......A|`);
      await page.locator('#rmq-parking-body-close').click();
      await text.waitFor({ state: 'detached' });
      // The peeks and body reads left every message in place.
      await waitFor(async () => (await broker.messageCount(names.parking)) === 3, 'the three messages still parked');
    } finally {
      await page.setViewportSize({ width: 1400, height: 900 });
    }
    assert.deepEqual(takeErrors(), []);
  });

  it('groups the parking queue by reason in the parking browser, and replaying one group moves exactly its messages', async function () {
    const names = await deployCheckConfig('ui-groups', 'ui-groups', 'groups test');
    const reasons = ['amount 1200 is over the 1000 limit', "customer 'Bob' unknown", 'amount 99.5 is over the 50 limit', 'timeout after 5000ms', "customer 'Ann' unknown", 'amount 7 is over the 5 limit'];
    for (const [i, reason] of reasons.entries()) {
      const headers: Record<string, unknown> = { 'park-reason': reason, 'park-time': new Date(Date.UTC(2026, 0, 1, 10, i)).toISOString(), 'park-original-exchange': '', 'park-original-routing-key': names.main };
      // One was replayed before and parked again: it stands out.
      if (i === 5) headers['park-replayed'] = 2;
      await broker.publish('', names.parking, { n: i + 1 }, { messageId: `ui-group-${i + 1}`, headers });
    }
    page.once('dialog', (dialog) => void dialog.accept());
    await page.reload();
    await page.waitForFunction(() => typeof RED !== 'undefined' && !!RED.nodes?.node?.('ui-groups-config'), null, { timeout: 60_000 });
    await page.evaluate(() => (RED as unknown as { sidebar: { show(id: string): void } }).sidebar.show('rabbitmq-retry-parking'));
    await page.locator('#rmq-parking-config').selectOption('ui-groups-config');
    await page.locator('#rmq-parking-view-groups').click();
    try {
      const groups = page.locator('.rmq-parking-group');
      await waitFor(async () => (await groups.count()) === 3, 'three groups');
      const shown = async (): Promise<string[]> =>
        groups.evaluateAll((blocks) => blocks.map((b) => `${b.querySelector('.rmq-parking-group-key')?.textContent ?? ''} | ${(b.querySelector('.rmq-parking-group-details')?.textContent ?? '').split(' · ')[0] ?? ''}`));
      assert.deepEqual(await shown(), ['amount {n} is over the {n} limit | 3', 'customer {s} unknown | 2', 'timeout after {n}ms | 1']);
      const over = page.locator('.rmq-parking-group[data-key="amount {n} is over the {n} limit"]');
      assert.match((await over.locator('.rmq-parking-group-details').textContent()) ?? '', /1 replayed before/);
      // A group opens to its messages; the one replayed before stands out.
      await over.locator('.rmq-parking-group-open').click();
      await waitFor(async () => (await over.locator('tr.rmq-parking-row').count()) === 3, 'the group opened to its three messages');
      assert.equal(await over.locator('tr.rmq-parking-row.rmq-parking-replayed').getAttribute('data-message-id'), 'ui-group-6');
      assert.match((await over.locator('.rmq-parking-replayed-badge').textContent()) ?? '', /replayed 2×/);
      await screenshot('parking-groups.png', '#red-ui-sidebar');

      // Replay one group, confirmed with its count: exactly its messages go back.
      const customers = page.locator('.rmq-parking-group[data-key="customer {s} unknown"]');
      await customers.locator('.rmq-parking-group-replay').click();
      const question = page.locator('.red-ui-notification').filter({ has: page.locator('#rmq-parking-confirm') });
      assert.match((await question.textContent()) ?? '', /Replay the 2 parked messages of the group “customer \{s\} unknown”/);
      await page.locator('.red-ui-notification button.primary').click();
      await waitFor(async () => (await broker.messageCount(names.main)) === 2, 'the group in the main queue');
      await waitFor(async () => (await groups.count()) === 2, 'two groups left');
      assert.deepEqual(await shown(), ['amount {n} is over the {n} limit | 3', 'timeout after {n}ms | 1']);
      assert.equal(await broker.messageCount(names.parking), 4);
      const replayed = [(await broker.take(names.main)).properties.messageId, (await broker.take(names.main)).properties.messageId];
      assert.deepEqual(replayed.sort(), ['ui-group-2', 'ui-group-5']);
    } finally {
      await page.locator('#rmq-parking-view-list').click();
    }
    // The list read again, before the next test deploys over this configuration (a read cut by a deploy answers 502).
    await waitFor(async () => /^4 parked in /.test((await page.locator('.rmq-parking-summary').textContent()) ?? ''), 'the list read again');
    assert.deepEqual(takeErrors(), []);
  });

  it('edits the error rules in the retry-config dialog: inserts the HTTP set, marks a bad rule, saves the edited list into the deployed flow', async function () {
    // Check mode and no consumer: nothing is declared or consumed (the queues exist for the parking
    // browser the earlier tests left open: it peeks the deployed configuration's parking queue).
    await deployCheckConfig('ui-rules', 'ui-rules', 'rules test');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.reload();
    await page.waitForFunction(() => typeof RED !== 'undefined' && !!RED.nodes?.node?.('ui-rules-config'), null, { timeout: 60_000 });

    await openEditor('ui-rules-config', 'retry-config');
    await tab('policy');
    const rows = page.locator('#retry-config-error-rules .retry-config-rule');
    assert.equal(await rows.count(), 0, 'a configuration saved before error rules has none');
    await page.locator('#retry-config-rules-http').click();
    await waitFor(async () => (await rows.count()) === 6, 'the HTTP set inserted');
    const cell = (row: number, part: 'name' | 'match' | 'value' | 'kind') => rows.nth(row).locator(`.retry-config-rule-${part}`);
    assert.deepEqual(
      await Promise.all([0, 1, 2, 3].map(async (i) => [await cell(i, 'match').inputValue(), await cell(i, 'value').inputValue(), await cell(i, 'kind').inputValue()])),
      [
        ['status', '408,429', 'transient'],
        ['status', '4xx', 'permanent'],
        ['status', '5xx', 'transient'],
        ['code', 'ECONNREFUSED', 'transient'],
      ],
    );
    // A status list the runtime would refuse is marked, with its reason as the tip; fixed, it is not.
    await cell(1, 'value').fill('4x');
    await cell(1, 'value').dispatchEvent('change');
    await waitFor(async () => ((await cell(1, 'value').getAttribute('class')) ?? '').includes('input-error'), 'the bad status list marked');
    assert.match((await cell(1, 'value').getAttribute('title')) ?? '', /'4x' is not a status code/);
    // Edited: the client errors narrowed to three codes, a rule renamed, ECONNREFUSED made permanent.
    await cell(1, 'value').fill('400,404,422');
    await cell(1, 'value').dispatchEvent('change');
    await waitFor(async () => !((await cell(1, 'value').getAttribute('class')) ?? '').includes('input-error'), 'the fixed status list unmarked');
    await cell(1, 'name').fill('payment refused');
    await cell(3, 'kind').selectOption('permanent');
    await cell(3, 'match').selectOption('code');
    // The picture (docs/nodes/retry-config.md) shows the rules, not the tab's top: scrolled to the last rule.
    await rows.last().evaluate((el) => el.scrollIntoView({ block: 'end' }));
    await screenshot('error-rules.png', '.red-ui-tray');
    await closeEditor('retry-config', 'ok');
    assert.notEqual((await ourNodes()).find((n) => n.id === 'ui-rules-config')?.valid, false, 'the edited configuration is valid');

    await page.locator('#red-ui-header-button-deploy').click();
    const saved = async (): Promise<Record<string, unknown> | undefined> => {
      const response = await red!.api('GET', '/flows', undefined, { 'Node-RED-API-Version': 'v2' });
      const { flows } = (await response.json()) as { flows: Array<Record<string, unknown>> };
      return flows.find((n) => n.id === 'ui-rules-config');
    };
    await waitFor(async () => Array.isArray((await saved())?.errorRules), 'the deployed flow with the rules');
    const config = (await saved())!;
    assert.deepEqual(config.errorRules, [
      { name: 'HTTP timeout or throttled', match: 'status', value: '408,429', kind: 'transient' },
      { name: 'payment refused', match: 'status', value: '400,404,422', kind: 'permanent' },
      { name: 'HTTP server error', match: 'status', value: '5xx', kind: 'transient' },
      { name: 'connection refused', match: 'code', value: 'ECONNREFUSED', kind: 'permanent' },
      { name: 'timed out', match: 'code', value: 'ETIMEDOUT', kind: 'transient' },
      { name: 'connection reset', match: 'code', value: 'ECONNRESET', kind: 'transient' },
    ]);
    assert.equal(String(config.version), String(PROPERTY_VERSIONS['retry-config']?.version), 'saved at the version the editor knows (errorRules and after)');
    assert.deepEqual(takeErrors(), []);
  });

  it("runs the demo on the canvas: the consumer's short status puts what waits in parking first (the README's picture)", async function () {
    // The demo as shipped, with its own broker object names and a 1 s retry delay.
    const demoNames = ['main-exchange', 'main-queue', 'retry-exchange', 'retry-queue', 'parking-queue', 'reply-queue'];
    const renamed = Object.fromEntries(demoNames.map((n) => [n, uniqueName(`ui-demo-${n}`)]));
    broker.track('queue', renamed['main-queue']!, renamed['retry-queue']!, renamed['parking-queue']!, renamed['reply-queue']!);
    broker.track('exchange', renamed['main-exchange']!, renamed['retry-exchange']!);
    const pattern = new RegExp(`\\b(${demoNames.join('|')})\\b`, 'g');
    // Renamed everywhere but in the names and notes the canvas shows, so the picture reads as the demo does.
    const flow = (JSON.parse(readFileSync(path.join(root, 'examples', 'flows.json'), 'utf8')) as Array<Record<string, unknown>>).map((node) =>
      Object.fromEntries(
        Object.entries(node).map(([key, value]) => [key, key === 'name' || key === 'info' ? value : (JSON.parse(JSON.stringify(value).replace(pattern, (n) => renamed[n]!)) as unknown)]),
      ),
    );
    const replay = flow.find((n) => n.type === 'park-replay')!;
    replay.name = 'replay main-queue parking';
    const config = flow.find((n) => n.type === 'retry-config')!;
    config.retryDelay = '1000';
    const consumer = flow.find((n) => n.type === 'retry-consumer')!;
    const inject = (name: string): Record<string, unknown> => flow.find((n) => n.type === 'inject' && n.name === name)!;
    const deployed = await red!.api('POST', '/flows', flow, { 'Node-RED-Deployment-Type': 'full' });
    assert.ok(deployed.ok, `deploy: ${deployed.status} ${await deployed.text()}`);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.setViewportSize({ width: 1500, height: 760 }); // the whole demo beside the sidebar
    await page.reload();
    await page.waitForFunction((id) => typeof RED !== 'undefined' && !!RED.nodes?.node?.(id), String(consumer.id), { timeout: 60_000 });
    await waitFor(async () => (await broker.ch().then((ch) => ch.checkQueue(renamed['main-queue']!))).consumerCount === 1, 'the demo consumer');
    for (const name of ['publish good payment', 'publish good payment', 'publish poison payment']) {
      const response = await red!.api('POST', `/inject/${String(inject(name).id)}`);
      assert.equal(response.status, 200);
      await new Promise((resolve) => setTimeout(resolve, 20)); // the demo's correlationIds are "good-" & $millis()
    }
    const status = page.locator(`[id="${String(consumer.id)}"] .red-ui-flow-node-status-label`);
    // The poison payment: attempts 1, 2, 3 a second apart, then parked; the status says so at once.
    await waitFor(async () => /^1 in parking · /.test((await status.textContent()) ?? ''), 'the consumer showing the parked payment', 30_000);
    const shown = (await status.textContent()) ?? '';
    assert.equal(shown, '1 in parking · ✓2 ↻2 ⚑1 · 0 in flight');
    await screenshot('demo-flow.png', '#red-ui-workspace-chart');
    await page.setViewportSize({ width: 1400, height: 900 });
    assert.deepEqual(takeErrors(), []);
  });

  it("shows a consumer's history as small charts in the parking browser (acked, parked, parking depth per minute)", async function () {
    const n = Object.fromEntries(['main-exchange', 'main', 'retry-exchange', 'retry', 'parking'].map((k) => [k, uniqueName(`ui-hist-${k}`)])) as Record<string, string>;
    broker.track('queue', n.main!, n.retry!, n.parking!);
    broker.track('exchange', n['main-exchange']!, n['retry-exchange']!);
    const flow = [
      { id: 'hist-tab', type: 'tab', label: 'history' },
      { id: 'hist-broker', type: 'retry-broker', name: 'test broker', url: AMQP_URL },
      { id: 'hist-config', type: 'retry-config', name: 'history test', broker: 'hist-broker', mode: 'declare', mainExchange: n['main-exchange'], mainExchangeType: 'direct', mainQueue: n.main, routingKeys: 'pay', retryExchange: n['retry-exchange'], retryExchangeType: 'fanout', retryQueue: n.retry, retryDelay: '1000', parkingQueue: n.parking, maxAttempts: '3' },
      { id: 'hist-consumer', type: 'retry-consumer', z: 'hist-tab', name: 'payments', config: 'hist-config', parkingWatch: '5', wires: [['hist-switch']] },
      { id: 'hist-switch', type: 'switch', z: 'hist-tab', property: 'payload.bad', propertyType: 'msg', rules: [{ t: 'true' }, { t: 'else' }], checkall: 'true', outputs: 2, wires: [['hist-park'], ['hist-ack']] },
      { id: 'hist-park', type: 'park-publisher', z: 'hist-tab', reason: 'bad payment', wires: [[]] },
      { id: 'hist-ack', type: 'retry-settle', z: 'hist-tab', action: 'ack', wires: [] },
    ];
    const deployed = await red!.api('POST', '/flows', flow, { 'Node-RED-Deployment-Type': 'full' });
    assert.ok(deployed.ok, `deploy: ${deployed.status} ${await deployed.text()}`);
    await waitFor(async () => (await broker.exists('queue', n.main!)) && (await broker.consumerCount(n.main!)) === 1, 'the consumer');
    for (const bad of [false, true, false, true, false]) await broker.publish(n['main-exchange']!, 'pay', { bad }, {});
    await waitFor(async () => (await broker.messageCount(n.parking!)) === 2, 'two parked');
    // The endpoint first: the consumer's minute counts, behind the read permission.
    const answer = (await (await red!.api('GET', '/rabbitmq-retry/history?config=hist-config&minutes=5')).json()) as { minutes: number; consumers: Array<{ consumer: string; name: string; acked: number[]; parked: number[] }> };
    assert.equal(answer.minutes, 5);
    assert.deepEqual(answer.consumers.map((c) => [c.consumer, c.name, c.acked.reduce((a, b) => a + b, 0), c.parked.reduce((a, b) => a + b, 0)]), [['hist-consumer', 'payments', 3, 2]]);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.reload();
    await page.waitForFunction(() => typeof RED !== 'undefined' && !!RED.nodes?.node?.('hist-config'), null, { timeout: 60_000 });
    await page.evaluate(() => (RED as unknown as { sidebar: { show(id: string): void } }).sidebar.show('rabbitmq-retry-parking'));
    await page.locator('#rmq-parking-config').selectOption('hist-config');
    const consumer = page.locator('.rmq-history-consumer[data-consumer="hist-consumer"]');
    const figure = (series: string) => consumer.locator(`[data-series="${series}"] .rmq-history-figure`);
    await figure('parked').waitFor({ state: 'visible' });
    assert.match((await consumer.textContent()) ?? '', /payments · /);
    assert.equal(await figure('acked').textContent(), '3');
    assert.equal(await figure('parked').textContent(), '2');
    assert.equal(await figure('retried').textContent(), '0');
    // A bar for the minute that parked; the depth line once the parking watch has looked.
    assert.equal(await consumer.locator('[data-series="parked"] svg rect').count(), 1);
    await waitFor(async () => (await figure('depth').textContent()) === '2', 'the parking depth in the history', 20_000);
    await page.locator('#rmq-parking-refresh').click();
    await consumer.locator('[data-series="depth"] svg circle, [data-series="depth"] svg polyline').first().waitFor({ state: 'attached' });
    await screenshot('parking-history.png', '#red-ui-sidebar');
    assert.deepEqual(takeErrors(), []);
  });

  it('speaks Russian and Ukrainian to a browser set to those languages', async function () {
    for (const [locale, check, tab, labels, connected, words] of [
      [
        'ru-RU',
        'Проверить топологию',
        'парковка',
        ['повторить', 'ответить'],
        'подключено',
        ['обменник', 'Удалить 1 припаркованное сообщение?', 'Удалить 3 припаркованных сообщения?', 'Удалить 5 припаркованных сообщений?', 'секунд (0 = выкл.)', 'секунд (0 = выкл.)'],
      ],
      [
        'uk-UA',
        'Перевірити топологію',
        'паркування',
        ['повторити', 'відповісти'],
        'підключено',
        ['обмінник', 'Видалити 1 припарковане повідомлення?', 'Видалити 3 припарковані повідомлення?', 'Видалити 5 припаркованих повідомлень?', 'секунд (0 = вимк.)', 'секунд (0 = вимк.)'],
      ],
    ] as const) {
      const context = await browser!.newContext({ locale });
      try {
        const localized = await context.newPage();
        await localized.goto(red!.base);
        await editorLoaded(localized);
        const texts = await localized.evaluate(
          () => [RED as unknown as { _(key: string): string }].map((r) => [r._('node-red-contrib-rabbitmq-retry/retry-config:retry-config.check.button'), r._('node-red-contrib-rabbitmq-retry/park-replay:park-replay.browser.tab')])[0],
        );
        assert.deepEqual(texts, [check, tab], locale);
        // The check table's kinds, plural forms through the editor's own i18next, one way to write a unit.
        const shownWords = await localized.evaluate(() =>
          [RED as unknown as { _(key: string, options?: Record<string, unknown>): string }].map((r) => [
            r._('node-red-contrib-rabbitmq-retry/retry-config:retry-config.check.kind.exchange'),
            ...[1, 3, 5].map((count) => r._('node-red-contrib-rabbitmq-retry/park-replay:park-replay.browser.confirm.purge', { count }).replace(/\?.*/, '?')),
            r._('node-red-contrib-rabbitmq-retry/retry-consumer:retry-consumer.label.seconds'),
            r._('node-red-contrib-rabbitmq-retry/retry-config:retry-config.label.maxAgeUnit'),
          ])[0],
        );
        assert.deepEqual(shownWords, [...words], locale);
        // Labels built in code: a settle node without a name is labelled by its action, in the language.
        await localized.evaluate(() =>
          (RED as unknown as { view: { importNodes(nodes: unknown[]): void } }).view.importNodes([
            { id: 'lang-settle', type: 'retry-settle', action: 'retry', x: 200, y: 80, wires: [] },
            { id: 'lang-reply', type: 'retry-publish', mode: 'reply', x: 200, y: 140, wires: [[]] },
          ]),
        );
        const shown = async (id: string): Promise<string> => {
          const label = localized.locator(`#${id} .red-ui-flow-node-label`);
          await label.waitFor({ state: 'attached' });
          return (await label.textContent()) ?? '';
        };
        assert.deepEqual([await shown('lang-settle'), await shown('lang-reply')], [...labels], locale);
        // A status the runtime sends as a catalog key is shown in the editor's language, as the editor
        // translates every status text (node._(text, {defaultValue: text})) — whatever the server's locale.
        const status = await localized.evaluate(
          (key) => (RED.nodes.node('lang-reply') as unknown as { _(key: string, options: Record<string, unknown>): string })._(key, { defaultValue: key }),
          statusKey('retry-broker.status.connected'),
        );
        assert.equal(status, connected, locale);
      } finally {
        await context.close();
      }
    }
  });
});
