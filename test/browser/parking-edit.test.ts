/**
 * Edit & replay in a real browser: Debian's chromium (playwright-core) against a Node-RED 4.1 with the
 * PACKED package and `rabbitmqRetry: { editParked: true }` in its settings.js. A retry consumer parks a
 * message with a negative amount; the parking browser's Edit & replay fixes the body and a header,
 * the flow then sees the edited copy (it keeps what it saw for an http endpoint), and the original is
 * gone from parking. Takes docs/images/parking-edit.png with UPDATE_SCREENSHOTS=1.
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

declare const RED: { nodes: { getType(type: string): unknown }; sidebar: { show(id: string): void }; tray: { close(): void } };

describe('parking browser: edit & replay in a real browser (chromium, packed package, Node-RED 4.1)', function () {
  this.timeout(180_000);
  const tempDirs: string[] = [];
  let red: NodeRedProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let broker: Broker;
  const pageErrors: string[] = [];
  const names = { exchange: uniqueName('ui-edit-ex'), main: uniqueName('ui-edit-main'), retryExchange: uniqueName('ui-edit-rx'), retry: uniqueName('ui-edit-retry'), parking: uniqueName('ui-edit-parking') };

  before(async function () {
    needChromium(this);
    broker = await Broker.open();
    broker.track('queue', names.main, names.retry, names.parking);
    broker.track('exchange', names.exchange, names.retryExchange);
    const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    tempDirs.push(packDir);
    const userDir = await userDirWith(await packPackage(packDir));
    tempDirs.push(userDir);
    red = await NodeRedProcess.start({ launch: await nodeRed4.prepare(), userDir, env: { AMQP_URL, RABBITMQ_MANAGEMENT_URL: MANAGEMENT_URL }, extraSettings: 'rabbitmqRetry: { editParked: true },' });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (err) => pageErrors.push(`uncaught: ${err.message}`));
  });

  after(async function () {
    await browser?.close();
    await red?.stop();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    await broker?.cleanup();
  });

  /** consumer → park a negative amount, else ack and keep what the flow saw (GET /edit-seen answers it). */
  function flow(): unknown[] {
    return [
      { id: 'edit-tab', type: 'tab', label: 'edit & replay' },
      { id: 'edit-broker', type: 'retry-broker', name: 'test broker', url: AMQP_URL },
      {
        id: 'edit-config',
        type: 'retry-config',
        name: 'payments',
        broker: 'edit-broker',
        mode: 'declare',
        mainExchange: names.exchange,
        mainExchangeType: 'direct',
        mainQueue: names.main,
        routingKeys: 'payment',
        retryExchange: names.retryExchange,
        retryExchangeType: 'fanout',
        retryQueue: names.retry,
        retryDelay: '500',
        parkingQueue: names.parking,
        maxAttempts: '3',
      },
      { id: 'edit-consumer', type: 'retry-consumer', z: 'edit-tab', x: 120, y: 80, config: 'edit-config', prefetch: '10', settleTimeout: '60', decode: 'auto', invalidBody: 'park', wires: [['edit-decide']] },
      {
        id: 'edit-decide',
        type: 'function',
        z: 'edit-tab',
        x: 320,
        y: 80,
        func: "if (msg.payload.amount < 0) { msg.error = 'amount ' + msg.payload.amount + ' is negative'; return [null, msg]; }\nglobal.set('editSeen', { payload: msg.payload, headers: msg.amqp.headers, messageId: msg.amqp.properties.messageId });\nreturn [msg, null];",
        outputs: 2,
        wires: [['edit-ack'], ['edit-park']],
      },
      { id: 'edit-ack', type: 'retry-settle', z: 'edit-tab', x: 520, y: 60, action: 'ack', wires: [] },
      { id: 'edit-park', type: 'park-publisher', z: 'edit-tab', x: 520, y: 100, wires: [[]] },
      { id: 'edit-parking', type: 'park-replay', z: 'edit-tab', x: 320, y: 160, config: 'edit-config', wires: [[]] },
      { id: 'edit-http', type: 'http in', z: 'edit-tab', x: 120, y: 220, url: '/edit-seen', method: 'get', wires: [['edit-read']] },
      { id: 'edit-read', type: 'function', z: 'edit-tab', x: 320, y: 220, func: "msg.payload = global.get('editSeen') || null; return msg;", outputs: 1, wires: [['edit-answer']] },
      { id: 'edit-answer', type: 'http response', z: 'edit-tab', x: 520, y: 220, wires: [] },
    ];
  }

  it('edits a parked message and replays it: the flow sees the edited body and headers, the original is gone', async function () {
    await red!.deploy(flow());
    await waitFor(async () => (await broker.exists('queue', names.main)) && (await broker.consumerCount(names.main)) === 1, 'the consumer consuming');
    await broker.publish(names.exchange, 'payment', { order: 4711, amount: -210.23, currency: 'EUR' }, { messageId: 'ui-edit-1', headers: { customer: 'c-1', channel: 'web' } });
    await waitFor(async () => (await broker.messageCount(names.parking)) === 1, 'the message parked');

    await page.goto(red!.base);
    await page.waitForFunction((types) => typeof RED !== 'undefined' && types.every((type) => !!RED.nodes?.getType?.(type)), Object.keys(repoPackage['node-red'].nodes), { timeout: 60_000 });
    await page.locator('#red-ui-palette-container-RabbitMQ_retry').waitFor({ state: 'attached' });
    // The editor may still show its own first tab as it finishes loading: show ours until it is there.
    await waitFor(async () => {
      await page.evaluate(() => RED.sidebar.show('rabbitmq-retry-parking'));
      return page.locator('#rmq-parking-config').isVisible();
    }, 'the parking sidebar');
    await page.locator('#rmq-parking-config').selectOption('edit-config');
    const row = page.locator('tr.rmq-parking-row[data-message-id="ui-edit-1"]');
    await row.waitFor({ state: 'visible' });
    const open = row.locator('button.rmq-parking-edit-open');
    assert.equal(await open.isEnabled(), true, `Edit & replay enabled (tooltip: ${await row.locator('.rmq-parking-edit-wrap').getAttribute('title')})`);
    await open.click();

    const body = page.locator('#rmq-parking-edit-body');
    await body.waitFor({ state: 'visible' });
    assert.deepEqual(JSON.parse(await body.inputValue()), { order: 4711, amount: -210.23, currency: 'EUR' });
    // Locked: the park record and the attempt count, read-only; editable: the message's own headers.
    const locked = await page.locator('tr.rmq-edit-locked').allTextContents();
    assert.ok(locked.some((text) => text.includes('park-reason') && text.includes('amount -210.23 is negative')), locked.join(' | '));
    assert.ok(locked.some((text) => text.includes('retry-attempt')), locked.join(' | '));
    const editable = page.locator('tr.rmq-edit-header');
    assert.deepEqual(await editable.locator('input.rmq-edit-name').evaluateAll((inputs) => inputs.map((i) => (i as unknown as { value: string }).value)), ['channel', 'customer']);

    // Not JSON any more: said, and not replayed.
    await body.fill('{"order": 4711, "amount": 210.23');
    await page.locator('.rmq-parking-edit-problem').waitFor({ state: 'visible' });
    await body.fill(JSON.stringify({ order: 4711, amount: 210.23, currency: 'EUR' }, null, 2));
    await page.locator('.rmq-parking-edit-problem').waitFor({ state: 'hidden' });
    // The rows in name order: channel, customer.
    await editable.nth(1).locator('.red-ui-typedInput-input').fill('c-2');
    await editable.nth(0).locator('button.rmq-edit-remove').click();
    await page.locator('#rmq-parking-edit-add').click();
    const added = page.locator('tr.rmq-edit-header').last();
    await added.locator('input.rmq-edit-name').fill('note');
    await added.locator('.red-ui-typedInput-input').fill('sign fixed by on-call');
    mkdirSync(IMAGES, { recursive: true });
    // Tall enough for the whole dialog, locked headers included.
    await page.setViewportSize({ width: 1400, height: 1150 });
    // The tray down to its last locked header, without the empty rest of the tray.
    const tray = await page.locator('.red-ui-tray').last().boundingBox();
    const end = await page.locator('table.rmq-parking-edit-locked').boundingBox();
    assert.ok(tray && end);
    await page.screenshot({ path: path.join(IMAGES, 'parking-edit.png'), clip: { x: tray.x, y: tray.y, width: tray.width, height: Math.min(end.y + end.height + 16, tray.y + tray.height) - tray.y } });
    await page.setViewportSize({ width: 1400, height: 900 });

    await page.locator('#rmq-parking-edit-replay').click();
    const question = page.locator('.red-ui-notification').filter({ has: page.locator('#rmq-parking-confirm') });
    await question.waitFor({ state: 'visible' });
    assert.match((await question.textContent()) ?? '', /Replay the edited copy of ui-edit-1/);
    await page.locator('#rmq-parking-confirm').click();

    let seen: { payload: unknown; headers: Record<string, unknown>; messageId: string } | null = null;
    await waitFor(async () => {
      seen = (await (await fetch(`${red!.base}/edit-seen`)).json()) as typeof seen;
      return seen !== null;
    }, 'the edited copy through the flow');
    const copy = seen as unknown as { payload: unknown; headers: Record<string, unknown>; messageId: string };
    assert.deepEqual(copy.payload, { order: 4711, amount: 210.23, currency: 'EUR' });
    assert.equal(copy.headers['replay-of'], 'ui-edit-1');
    assert.equal(copy.headers.customer, 'c-2');
    assert.equal(copy.headers.note, 'sign fixed by on-call');
    assert.equal(copy.headers.channel, undefined);
    assert.equal(copy.headers['replayed-by'], 'anonymous');
    assert.notEqual(copy.messageId, 'ui-edit-1');
    assert.equal(await broker.messageCount(names.parking), 0);
    await page.locator('tr.rmq-parking-row[data-message-id="ui-edit-1"]').waitFor({ state: 'detached' });
    assert.deepEqual(pageErrors, []);
  });
});
