// @ts-check
// The services `npm start` and `npm test` use — RabbitMQ with its management API, PostgreSQL, Redis,
// chromium — where they are (the environment variables and their defaults, read here only), whether
// they answer, what this machine lets a script fix (start a local broker, enable its management
// plugin; the database: stores.mjs), and how a developer provides what is missing. Runs before the
// build: plain Node and the installed dependencies, nothing of dist/.
import { accessSync, constants, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';

/** How to get each service, when it does not answer. */
export const HOW = {
  rabbitmq:
    'get one with `sudo apt-get install rabbitmq-server` or `docker run -d -p 5672:5672 -p 15672:15672 rabbitmq:3-management`, or point AMQP_URL at one',
  management: 'enable it with `sudo rabbitmq-plugins enable rabbitmq_management`, or point RABBITMQ_MANAGEMENT_URL at the broker\'s management API',
  postgres: 'get one with `sudo apt-get install postgresql` (the user postgres may log in over 127.0.0.1 without a password), or point DATABASE_URL at one',
  database: 'create it with `createdb -h 127.0.0.1 -U postgres test`, or point DATABASE_URL at another',
  redis: 'get one with `sudo apt-get install redis-server`, or point REDIS_URL at one',
  chromium: "install Debian's chromium (`sudo apt-get install chromium`) or set CHROMIUM_PATH",
};

/**
 * The services' addresses as the tests read them from `env`.
 * @param {Record<string, string | undefined>} env
 */
export function serviceUrls(env) {
  const amqp = env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672';
  return {
    amqp,
    management: env.RABBITMQ_MANAGEMENT_URL || `http://${hostOf(amqp)}:15672`,
    database: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test',
    redis: env.REDIS_URL || 'redis://127.0.0.1:6379',
    chromium: env.CHROMIUM_PATH || '/usr/bin/chromium',
  };
}

/**
 * The host of an AMQP URL (the first of a list), 127.0.0.1 when it has none or is not a URL.
 * @param {string} url
 */
export function hostOf(url) {
  try {
    const { hostname } = new URL(url.split(/[\s,]+/)[0] ?? '');
    return hostname || '127.0.0.1';
  } catch {
    return '127.0.0.1';
  }
}

/** @param {string} host */
export function isLocal(host) {
  return ['127.0.0.1', 'localhost', '::1', '[::1]', '0.0.0.0'].includes(host);
}

/**
 * A URL to print: its password replaced by ***.
 * @param {string} url
 */
export function shown(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url.includes('@') ? '***' : url;
  }
}

/**
 * The broker of an AMQP URL: host, port, user and password (guest/guest when it names none), and
 * whether it is this host's default node — the one `rabbitmq-server` and `rabbitmq-plugins` act on
 * (it listens on RABBITMQ_NODE_PORT, default 5672). Undefined when the URL is not a URL.
 * @param {string} amqpUrl
 * @param {Record<string, string | undefined>} env
 */
export function brokerTarget(amqpUrl, env) {
  let url;
  try {
    url = new URL(amqpUrl.split(/[\s,]+/)[0] ?? '');
  } catch {
    return undefined;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(url.port || (url.protocol === 'amqps:' ? 5671 : 5672));
  return {
    host,
    port,
    address: `${host}:${port}`,
    user: decodeURIComponent(url.username || 'guest'),
    password: decodeURIComponent(url.password || 'guest'),
    defaultNode: isLocal(host) && port === Number(env.RABBITMQ_NODE_PORT || 5672),
  };
}

/**
 * True when something accepts TCP connections on host:port within timeoutMs.
 * @param {string} host
 * @param {number} port
 */
export function probe(host, port, timeoutMs = 1500) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    /** @param {boolean} ok */
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

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` once a second until it is true or `ms` have passed.
 * @param {() => Promise<boolean>} check
 * @param {number} ms
 */
async function within(check, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(1000);
  }
}

/**
 * An executable of RabbitMQ on PATH, or where Debian/Ubuntu's package puts it.
 * @param {string} name
 */
export function findRabbitmqTool(name) {
  const dirs = (process.env.PATH || '').split(path.delimiter).filter(Boolean);
  for (const dir of [...dirs, '/usr/sbin', '/usr/lib/rabbitmq/bin']) {
    try {
      accessSync(path.join(dir, name), constants.X_OK);
      return path.join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** @param {string} file */
function readable(file) {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether RabbitMQ answers at the broker; when it does not and it is this host's default node with
 * rabbitmq-server installed, starts it (`rabbitmq-server -detached`) and waits up to 60 s.
 * `problem`: why it does not answer, for the line that says so.
 * @param {{ host: string, port: number, address: string, defaultNode: boolean }} broker
 * @param {(line: string) => void} log
 * @returns {Promise<{ answers: boolean, started?: boolean, problem?: string }>}
 */
export async function ensureBroker(broker, log) {
  if (await probe(broker.host, broker.port)) return { answers: true };
  const server = broker.defaultNode ? findRabbitmqTool('rabbitmq-server') : undefined;
  if (!server) return { answers: false, problem: `nothing answers at ${broker.address}` };
  log(`nothing listens at ${broker.address}: starting RabbitMQ (${server} -detached) …`);
  const started = spawnSync(server, ['-detached'], { stdio: 'inherit' });
  if (started.error || started.status !== 0) {
    return { answers: false, problem: `could not start ${server}${started.error ? `: ${started.error.message}` : ` (exit code ${started.status})`}` };
  }
  if (await within(() => probe(broker.host, broker.port), 60_000)) return { answers: true, started: true };
  return { answers: false, problem: `RabbitMQ was started but ${broker.address} did not answer within 60 s` };
}

/**
 * GET <management>/api/overview as the broker's user: 'ok', 'refused' (nothing listens), or the
 * reason it did not answer.
 * @param {string} managementUrl
 * @param {{ user: string, password: string }} broker
 * @returns {Promise<'ok' | 'refused' | string>}
 */
export async function managementState(managementUrl, broker) {
  // A user:password in the URL wins, moved into the header (fetch refuses a URL with them), as the
  // package's managementEndpoint (src/lib/topology) does; this script runs before the build.
  const base = new URL(managementUrl.endsWith('/') ? managementUrl : `${managementUrl}/`);
  let { user, password } = broker;
  if (base.username !== '') {
    user = decodeURIComponent(base.username);
    password = decodeURIComponent(base.password);
    base.username = '';
    base.password = '';
  }
  const auth = Buffer.from(`${user}:${password}`).toString('base64');
  try {
    const response = await fetch(new URL('api/overview', base), {
      headers: { authorization: `Basic ${auth}` },
      signal: AbortSignal.timeout(3000),
    });
    await response.body?.cancel();
    if (response.ok) return 'ok';
    return response.status === 401 ? `the user ${user} may not log in to it (401)` : `it answered ${response.status}`;
  } catch (err) {
    const code = /** @type {{ cause?: { code?: string } }} */ (err).cause?.code;
    if (code === 'ECONNREFUSED') return 'refused';
    return code ?? (err instanceof Error ? err.message : String(err));
  }
}

/**
 * `rabbitmq-plugins enable rabbitmq_management` on this host's default node, then waits up to 60 s
 * for the API. Undefined when it answers; else why not.
 * @param {string} managementUrl
 * @param {{ user: string, password: string }} broker
 * @returns {Promise<string | undefined>}
 */
export async function enableManagement(managementUrl, broker) {
  const plugins = findRabbitmqTool('rabbitmq-plugins');
  if (!plugins) return 'rabbitmq-plugins is not installed here';
  // Without the broker's Erlang cookie the command fails, after seconds of trying: say so at once.
  const cookies = [path.join(process.env.HOME || '', '.erlang.cookie'), '/var/lib/rabbitmq/.erlang.cookie'];
  if (!cookies.some(readable)) return `this user may not run rabbitmq-plugins (it cannot read the broker's Erlang cookie, ${cookies[1]})`;
  const run = spawnSync(plugins, ['enable', 'rabbitmq_management'], { encoding: 'utf8', timeout: 30_000 });
  if (run.error || run.status !== 0) {
    const said = `${run.stderr ?? ''}\n${run.stdout ?? ''}`.split('\n').map((line) => line.trim()).find(Boolean);
    return `\`rabbitmq-plugins enable rabbitmq_management\` failed${said ? ` (${said})` : run.error ? ` (${run.error.message})` : ''}`;
  }
  if (await within(async () => (await managementState(managementUrl, broker)) === 'ok', 60_000)) return undefined;
  return 'the plugin is enabled but the API did not answer within 60 s';
}

/**
 * Why the browser tests cannot run (no chromium at the path), or undefined when they can.
 * @param {Record<string, string | undefined>} env
 */
export function chromiumMissing(env) {
  const { chromium } = serviceUrls(env);
  return existsSync(chromium) ? undefined : `no chromium at ${chromium}: ${HOW.chromium}`;
}
