/**
 * Issue 29: the examples imported into a user's own Node-RED, started WITHOUT any of the variables
 * they name (AMQP_URL, RABBITMQ_MANAGEMENT_URL, DATABASE_URL: `npm start` sets them, a user's Node-RED
 * does not), deploy with no red line in the debug sidebar. Each is imported through the editor's
 * Import dialog (its text pasted, as from the Examples tab, with this run's own queue and table names),
 * deployed with the Deploy button, and looked at once its consumers are running: the broker at the
 * examples' own 127.0.0.1:5672 (guest), PostgreSQL at 127.0.0.1:5432 database `postgres` (the orders
 * and batch examples' defaults) as PGUSER=postgres: a user is the one thing the orders example cannot carry.
 *
 * Chromium as in editor.test.ts: skipped locally without it, a failure under CI=true.
 */
import assert from 'node:assert/strict';
import { needChromium } from '../helpers/skips';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { PostgresDatabase } from '../../src/lib/postgres';
import { Broker, uniqueName, waitFor } from '../helpers/broker';
import { NodeRedProcess, packPackage, PACKAGE, userDirWith } from '../helpers/node-red-process';
import { nodeRed4 } from '../e2e/node-red-runtimes';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** What the examples' nodes fall back to when their variables are unset. */
const EXAMPLE_BROKER = 'amqp://guest:guest@127.0.0.1:5672';
const EXAMPLE_DATABASE = 'postgres://postgres@127.0.0.1:5432/postgres';
const EXAMPLE_ENV = ['AMQP_URL', 'RABBITMQ_MANAGEMENT_URL', 'DATABASE_URL'];

/** Each example with the broker objects and tables it names: renamed for this run. */
const EXAMPLES = [
  { file: 'flows.json', names: ['main-exchange', 'main-queue', 'retry-exchange', 'retry-queue', 'parking-queue', 'reply-queue'], queues: ['main-queue'] },
  { file: 'async-web-service.json', names: ['payments-exchange', 'payments-queue', 'payments-replies'], queues: ['payments-queue', 'payments-replies'] },
  { file: 'downstream-outage.json', names: ['outage-exchange', 'outage-queue'], queues: ['outage-queue'] },
  { file: 'orders-outbox.json', names: ['orders-exchange', 'orders-queue', 'demo_orders', 'rabbitmq_retry_outbox', 'rabbitmq_retry_dedupe'], queues: ['orders-queue'] },
  { file: 'batch-to-postgres.json', names: ['rows-exchange', 'rows-checked-queue', 'rows-bisect-queue', 'demo_rows', 'rabbitmq_retry_outbox'], queues: ['rows-checked-queue', 'rows-bisect-queue'] },
] as const;
const TABLES = ['demo_orders', 'demo_rows', 'rabbitmq_retry_outbox', 'rabbitmq_retry_dedupe'];
/** The table an example creates on deploy (an inject once). */
const CREATED: Record<string, string> = { 'orders-outbox.json': 'demo_orders', 'batch-to-postgres.json': 'demo_rows' };

interface EditorNode {
  id: string;
  type: string;
  z?: string;
  status?: { fill?: string; text?: string };
}
interface PageRED {
  nodes: { eachNode(cb: (n: EditorNode) => void): void; dirty(): boolean; getType(type: string): unknown };
  sidebar: { show(id: string): void };
}
declare const RED: PageRED;

describe('the examples imported into a Node-RED without their environment variables (chromium)', function () {
  this.timeout(240_000);
  const tempDirs: string[] = [];
  let red: NodeRedProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let broker: Broker;
  let db: PostgresDatabase | undefined;
  const renamed: Record<string, string> = {};
  let userDir = '';

  const log = (): string => red?.log() ?? '';

  before(async function () {
    needChromium(this);
    for (const example of EXAMPLES) {
      // Table names must be SQL identifiers; queue names keep the test- prefix the cleanup knows.
      for (const name of example.names) renamed[name] = TABLES.includes(name) ? uniqueName(name).replace(/[^A-Za-z0-9_]/g, '_') : uniqueName(`env-${name}`);
    }
    broker = await Broker.open(EXAMPLE_BROKER);
    for (const q of ['main-queue', 'retry-queue', 'parking-queue', 'reply-queue']) broker.track('queue', renamed[q]!);
    for (const q of ['payments-queue', 'payments-replies', 'outage-queue', 'orders-queue', 'rows-checked-queue', 'rows-bisect-queue']) broker.track('queue', renamed[q]!, `${renamed[q]!}.retry`, `${renamed[q]!}.parking`);
    broker.track('exchange', renamed['main-exchange']!, renamed['retry-exchange']!, renamed['payments-exchange']!, renamed['outage-exchange']!, renamed['orders-exchange']!, renamed['rows-exchange']!);
    db = new PostgresDatabase({ connectionString: EXAMPLE_DATABASE });

    const packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-pack-'));
    tempDirs.push(packDir);
    userDir = await userDirWith(await packPackage(packDir));
    tempDirs.push(userDir);
    // The orders example's PostgreSQL node has no user (an export never carries credentials): pg's own PGUSER
    // names it, as its comment says (the user Node-RED runs as otherwise, which this machine's environment may not name).
    red = await NodeRedProcess.start({ launch: await nodeRed4.prepare(), userDir, unsetEnv: EXAMPLE_ENV, env: { PGUSER: 'postgres' } });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(red.base);
    await page.waitForFunction(() => typeof RED !== 'undefined' && !!RED.nodes?.getType?.('retry-consumer'), null, { timeout: 60_000 });
    await page.evaluate(() => RED.sidebar.show('debug'));
  });

  afterEach(async function () {
    if (this.currentTest?.state !== 'failed' || !browser) return;
    const file = path.join(os.tmpdir(), `rmq-retry-browser-failure-${Date.now()}.png`);
    await page.screenshot({ path: file }).catch(() => undefined);
    console.log(`screenshot of the failure: ${file}`);
    await page.keyboard.press('Escape').catch(() => undefined); // a dialog left open
  });

  after(async function () {
    await browser?.close();
    await red?.stop();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    await broker?.cleanup();
    for (const table of TABLES) if (renamed[table]) await db?.query(`DROP TABLE IF EXISTS ${renamed[table]}`).catch(() => undefined);
    await db?.close();
  });

  /** The debug sidebar's lines of one level (20 error, red; 30 warning), as text. */
  async function sidebarLines(level: 10 | 20 | 30): Promise<string[]> {
    return page.locator(`#red-ui-sidebar .red-ui-debug-msg-level-${level}`).allTextContents();
  }

  /** The retry consumers the editor shows, with their statuses. */
  async function consumers(): Promise<EditorNode[]> {
    return page.evaluate(() => {
      const out: EditorNode[] = [];
      RED.nodes.eachNode((n) => {
        if (n.type === 'retry-consumer') out.push({ id: n.id, type: n.type, status: n.status ? { fill: n.status.fill, text: n.status.text } : undefined });
      });
      return out;
    });
  }

  for (const example of EXAMPLES) {
    it(`${example.file}: imported as it is and deployed, no red line in the debug sidebar`, async function () {
      let text = readFileSync(path.join(userDir, 'node_modules', PACKAGE, 'examples', example.file), 'utf8');
      for (const name of example.names) assert.ok(text.includes(name), `${example.file} no longer names ${name}`);
      text = text.replace(new RegExp(`\\b(${example.names.join('|')})\\b`, 'g'), (n) => renamed[n]!);
      const before = (await consumers()).length;

      // Menu ▸ Import, the text pasted into the dialog, Import, dropped on the workspace.
      await page.locator('#red-ui-header-button-sidemenu').click();
      await page.locator('#menu-item-import').click();
      const pasted = page.locator('#red-ui-clipboard-dialog-import-text');
      await pasted.fill(text);
      await pasted.dispatchEvent('keyup'); // what Node-RED validates the text on
      await page.locator('#red-ui-clipboard-dialog-ok:not([disabled])').waitFor();
      await page.locator('#red-ui-clipboard-dialog-ok').click();
      await page.mouse.click(700, 500);
      await page.waitForFunction((n) => {
        let count = 0;
        RED.nodes.eachNode((node) => {
          if (node.type === 'retry-consumer') count += 1;
        });
        return count > n;
      }, before);

      await page.locator('#red-ui-header-button-deploy').click();
      await page.waitForFunction(() => !RED.nodes.dirty(), null, { timeout: 30_000 });

      // Settled: a consumer on each of the example's queues, and every consumer's status its counters.
      for (const queue of example.queues) await waitFor(async () => (await broker.consumerCount(renamed[queue]!).catch(() => 0)) === 1, `a consumer on ${renamed[queue]}${log()}`, 60_000);
      await waitFor(
        async () => (await consumers()).every((c) => /✓/.test(c.status?.text ?? '') && ['green', 'yellow'].includes(c.status?.fill ?? '')),
        `every consumer's status showing its counters: ${JSON.stringify(await consumers())}${log()}`,
        60_000,
      );
      const created = CREATED[example.file];
      if (created) {
        // The example creates its table on deploy (an inject once): done, or its error is in the sidebar.
        await waitFor(async () => (await db!.query(`SELECT to_regclass('${renamed[created]!}') IS NOT NULL AS made`)).rows[0]?.made === true, `table ${renamed[created]!}${log()}`, 30_000);
      }

      assert.deepEqual([...(await sidebarLines(10)), ...(await sidebarLines(20))], [], `red lines in the debug sidebar${log()}`);
      const warnings = await sidebarLines(30);
      // The sidebar does show what the runtime logs as a warning: the broker URL's own fallback (a control: the check above can fail).
      assert.ok(warnings.some((w) => w.includes('broker URL ${AMQP_URL}: environment variable not set')), `warnings: ${JSON.stringify(warnings)}`);
      assert.deepEqual(warnings.filter((w) => w.includes('RABBITMQ_MANAGEMENT_URL')), [], 'the management URL unset is no warning');
      assert.deepEqual(red!.lines().filter((line) => line.includes('[error]')), [], `Node-RED logged errors${log()}`);
    });
  }
});
