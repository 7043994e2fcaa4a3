// `npm start`: runs Node-RED (the devDependency) with this package and the example flows loaded,
// in the repo-local user directory .node-red-dev/, against the RabbitMQ in AMQP_URL — started
// here when it is local, not running and installed.
//
//   AMQP_URL      broker (default amqp://guest:guest@127.0.0.1:5672)
//   RABBITMQ_MANAGEMENT_URL  the broker's management API, which the examples' brokers read to compare
//                 queue arguments (default http://<AMQP_URL's host>:15672; the broker's user and password)
//   DATABASE_URL  PostgreSQL for the outbox example (default postgres://postgres@127.0.0.1:5432/postgres);
//                 the example is added only when it answers
//   PORT          editor port (default 1880)
//
// Reset the demo: stop, delete .node-red-dev/flows.json (or all of .node-red-dev/), start again.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const userDir = path.join(root, '.node-red-dev');
const packageName = 'node-red-contrib-rabbitmq-retry';
const amqpUrl = process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';
const uiPort = Number(process.env.PORT || 1880);
const managementUrl = process.env.RABBITMQ_MANAGEMENT_URL || `http://${hostOf(amqpUrl)}:15672`;
const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const log = (line) => console.log(`[start] ${line}`);

/** The host of an AMQP URL (the first of a list), 127.0.0.1 when it has none or is not a URL. */
function hostOf(url) {
  try {
    const { hostname } = new URL(url.split(/[\s,]+/)[0]);
    return hostname || '127.0.0.1';
  } catch {
    return '127.0.0.1';
  }
}

/** True when something accepts TCP connections on host:port within timeoutMs. */
function probe(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const finish = (ok) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** rabbitmq-server on PATH, or the Debian/Ubuntu package's location. */
function findRabbitmqServer() {
  const dirs = (process.env.PATH || '').split(path.delimiter).filter(Boolean);
  for (const candidate of [...dirs.map((d) => path.join(d, 'rabbitmq-server')), '/usr/sbin/rabbitmq-server']) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

async function ensureBroker() {
  let url;
  try {
    url = new URL(amqpUrl);
  } catch {
    // The package's own redaction (built before this runs): the value may hold a password.
    const { redactUrl } = createRequire(import.meta.url)('../dist/lib/connection/settings.js');
    log(`AMQP_URL is not a URL (${redactUrl(amqpUrl)}); starting Node-RED anyway.`);
    return;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(url.port || (url.protocol === 'amqps:' ? 5671 : 5672));
  const shown = `${host}:${port}`;
  if (await probe(host, port)) {
    log(`RabbitMQ answers at ${shown}.`);
    return;
  }
  const local = ['127.0.0.1', 'localhost', '::1', '0.0.0.0'].includes(host);
  // rabbitmq-server listens on RABBITMQ_NODE_PORT (default 5672): starting it only helps for that port.
  const serverPort = Number(process.env.RABBITMQ_NODE_PORT || 5672);
  const server = local && port === serverPort ? findRabbitmqServer() : undefined;
  if (server) {
    log(`nothing listens at ${shown}: starting RabbitMQ (${server} -detached) …`);
    const started = spawnSync(server, ['-detached'], { stdio: 'inherit' });
    if (started.error || started.status !== 0) {
      log(`could not start ${server}${started.error ? `: ${started.error.message}` : ` (exit code ${started.status})`}.`);
    } else {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        if (await probe(host, port)) {
          log(`RabbitMQ started, answering at ${shown}.`);
          return;
        }
        await sleep(1000);
      }
      log(`RabbitMQ was started but ${shown} did not answer within 60 s.`);
    }
  }
  log(
    `No RabbitMQ at ${shown} — get one with \`sudo apt-get install rabbitmq-server\` or ` +
      '`docker run -d -p 5672:5672 -p 15672:15672 rabbitmq:3-management`, or point AMQP_URL at one. ' +
      'Starting Node-RED anyway: the nodes show "connection refused" and keep retrying.',
  );
}

/** Whether PostgreSQL answers at DATABASE_URL (a login, not just a port), for the outbox example. */
async function databaseAnswers() {
  const pg = createRequire(import.meta.url)('pg');
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (err) {
    const { redactUrl } = createRequire(import.meta.url)('../dist/lib/connection/settings.js');
    log(`no PostgreSQL at ${redactUrl(databaseUrl)} (${err.message}): the outbox example is left out; set DATABASE_URL to a database you can log in to and delete .node-red-dev/flows.json to add it.`);
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** .node-red-dev/ with settings.js, the package linked into node_modules and (first run) the example flow. */
function prepareUserDir(withOutbox) {
  mkdirSync(path.join(userDir, 'node_modules'), { recursive: true });

  // Node-RED loads every package in <userDir>/node_modules that has a "node-red" section; a symlink
  // to the repo means a rebuild (npm start builds) is picked up on the next start.
  const link = path.join(userDir, 'node_modules', packageName);
  let linked = false;
  try {
    linked = lstatSync(link).isSymbolicLink() && path.resolve(path.dirname(link), readlinkSync(link)) === root;
    if (!linked) rmSync(link, { recursive: true, force: true });
  } catch {
    // missing
  }
  if (!linked) symlinkSync(path.relative(path.dirname(link), root) || '.', link, 'dir');

  // Listing it makes the palette manager show it as installed by the user.
  writeFileSync(
    path.join(userDir, 'package.json'),
    `${JSON.stringify({ name: 'node-red-dev-userdir', description: 'npm start user directory', version: '0.0.0', private: true, dependencies: { [packageName]: 'file:..' } }, null, 2)}\n`,
  );

  writeFileSync(
    path.join(userDir, 'settings.js'),
    `/* eslint-disable */
// Written by scripts/start.mjs on every start: edit that script, not this file.
module.exports = {
  flowFile: 'flows.json',
  // Fixed on purpose: a development directory, never a place for real credentials.
  credentialSecret: 'dev-only-secret',
  uiHost: '127.0.0.1',
  uiPort: Number(process.env.PORT || 1880),
  diagnostics: { enabled: false },
  telemetry: { enabled: false },
  logging: { console: { level: 'info', metrics: false, audit: false } },
  editorTheme: { projects: { enabled: false }, tours: false },
};
`,
  );

  const flows = path.join(userDir, 'flows.json');
  if (existsSync(flows)) {
    log(`using the existing flows ${flows} (delete it to get the example flows back).`);
  } else {
    // The examples, one tab each: the retry demo, the async web service and, when PostgreSQL answers,
    // the orders with a transactional outbox (their node ids differ).
    const example = (file) => JSON.parse(readFileSync(path.join(root, 'examples', file), 'utf8'));
    const files = ['flows.json', 'async-web-service.json', 'downstream-outage.json', ...(withOutbox ? ['orders-outbox.json'] : [])];
    writeFileSync(flows, JSON.stringify(files.flatMap(example), null, 2));
    log(`example flows written to ${flows}: ${files.join(', ')} (delete it to reset the demo).`);
  }
}

function startNodeRed() {
  const red = path.join(root, 'node_modules', 'node-red', 'red.js');
  if (!existsSync(red)) {
    log('node_modules/node-red is missing: run `npm ci` first.');
    process.exit(1);
  }
  log(`editor: http://127.0.0.1:${uiPort}/  (Ctrl-C stops it)`);
  const child = spawn(process.execPath, [red, '--userDir', userDir], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, AMQP_URL: amqpUrl, RABBITMQ_MANAGEMENT_URL: managementUrl, DATABASE_URL: databaseUrl, PORT: String(uiPort) },
  });
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  process.on('SIGINT', () => forward('SIGINT'));
  process.on('SIGTERM', () => forward('SIGTERM'));
  child.on('error', (err) => {
    log(`could not start Node-RED: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal === 'SIGINT' || signal === 'SIGTERM') process.exit(0);
    process.exit(code ?? 1);
  });
}

await ensureBroker();
const flowsExist = existsSync(path.join(userDir, 'flows.json'));
prepareUserDir(!flowsExist && (await databaseAnswers()));
startNodeRed();
