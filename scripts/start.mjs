// `npm start`: runs Node-RED (the devDependency) with this package and the example flows loaded,
// in the repo-local user directory .node-red-dev/, against the RabbitMQ in AMQP_URL — started
// here when it is local, not running and installed.
//
//   AMQP_URL      broker (default amqp://guest:guest@127.0.0.1:5672)
//   RABBITMQ_MANAGEMENT_URL  the broker's management API, which the examples' brokers read to compare
//                 queue arguments (default http://<AMQP_URL's host>:15672; the broker's user and password)
//   DATABASE_URL  PostgreSQL for the outbox and batch examples (default postgres://postgres@127.0.0.1:5432/postgres);
//                 they are added only when it answers
//   PORT          editor port (default 1880)
//
// Reset the demo: stop, delete .node-red-dev/flows.json (or all of .node-red-dev/), start again.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brokerTarget, ensureBroker as startBroker, HOW, serviceUrls, shown } from './services.mjs';
import { databaseState } from './stores.mjs';

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const userDir = path.join(root, '.node-red-dev');
const packageName = 'node-red-contrib-rabbitmq-retry';
const { amqp: amqpUrl, management: managementUrl } = serviceUrls(process.env);
const uiPort = Number(process.env.PORT || 1880);
const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const log = (line) => console.log(`[start] ${line}`);

async function ensureBroker() {
  const broker = brokerTarget(amqpUrl, process.env);
  if (!broker) {
    // The package's own redaction (built before this runs): the value may hold a password.
    const { redactUrl } = createRequire(import.meta.url)('../dist/lib/connection/settings.js');
    log(`AMQP_URL is not a URL (${redactUrl(amqpUrl)}); starting Node-RED anyway.`);
    return;
  }
  const result = await startBroker(broker, log);
  if (result.answers) {
    log(`RabbitMQ ${result.started ? 'started, answering' : 'answers'} at ${broker.address}.`);
    return;
  }
  log(`${result.problem} — ${HOW.rabbitmq}. Starting Node-RED anyway: the nodes show "connection refused" and keep retrying.`);
}

/** Whether PostgreSQL answers at DATABASE_URL (a login, not just a port), for the outbox and batch examples. */
async function databaseAnswers() {
  const state = await databaseState(databaseUrl);
  if (state === 'ok') return true;
  log(`no PostgreSQL at ${shown(databaseUrl)} (${state === 'no-database' ? 'no such database' : state}): the outbox and batch examples are left out; set DATABASE_URL to a database you can log in to and delete .node-red-dev/flows.json to add it.`);
  return false;
}

/** .node-red-dev/ with settings.js, the package linked into node_modules and (first run) the example flow. */
function prepareUserDir(withDatabase) {
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
    // the orders with a transactional outbox and the batches into PostgreSQL (their node ids differ).
    const example = (file) => JSON.parse(readFileSync(path.join(root, 'examples', file), 'utf8'));
    const files = ['flows.json', 'async-web-service.json', 'downstream-outage.json', ...(withDatabase ? ['orders-outbox.json', 'batch-to-postgres.json'] : [])];
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
