// @ts-check
// What `npm test`'s preflight (scripts/preflight.mjs) says about each service it checked: pure, from
// what the checks found to one finding per service, and from the findings to the lines it prints.
import { HOW, isLocal, shown } from './services.mjs';

/**
 * @typedef {{ state: 'ok' | 'fixed' | 'skip' | 'missing', service: string, at: string, note?: string }} Finding
 */

/**
 * @param {string} amqpUrl
 * @param {{ answers: boolean, started?: boolean, problem?: string } | undefined} result undefined: AMQP_URL is not a URL
 * @returns {Finding}
 */
export function brokerFinding(amqpUrl, result) {
  const at = shown(amqpUrl);
  if (!result) return { state: 'missing', service: 'RabbitMQ', at, note: `AMQP_URL is not a URL: ${HOW.rabbitmq}` };
  if (result.started) return { state: 'fixed', service: 'RabbitMQ', at, note: 'started (rabbitmq-server -detached)' };
  return result.answers ? { state: 'ok', service: 'RabbitMQ', at } : { state: 'missing', service: 'RabbitMQ', at, note: `${result.problem}: ${HOW.rabbitmq}` };
}

/**
 * @param {string} url the management API
 * @param {string} state what managementState said before any fix
 * @param {{ defaultNode: boolean } | undefined} broker
 * @param {string | undefined} [enableProblem] after `rabbitmq-plugins enable`: undefined when it worked
 * @returns {Finding}
 */
export function managementFinding(url, state, broker, enableProblem) {
  const at = shown(url);
  const service = 'RabbitMQ management API';
  if (state === 'ok') return { state: 'ok', service, at };
  if (state === 'refused' && canEnable(broker, url)) {
    return enableProblem === undefined
      ? { state: 'fixed', service, at, note: 'enabled its plugin (rabbitmq-plugins enable rabbitmq_management)' }
      : { state: 'missing', service, at, note: `nothing answers, and ${enableProblem}: ${HOW.management}` };
  }
  return { state: 'missing', service, at, note: `${state === 'refused' ? 'nothing answers' : state}: ${HOW.management}` };
}

/**
 * Whether the management plugin is ours to enable: the broker is this host's default node, which
 * serves the management API on this host too.
 * @param {{ defaultNode: boolean } | undefined} broker
 * @param {string} managementUrl
 */
export function canEnable(broker, managementUrl) {
  if (!broker?.defaultNode) return false;
  try {
    return isLocal(new URL(managementUrl).hostname);
  } catch {
    return false;
  }
}

/**
 * @param {string} url DATABASE_URL
 * @param {string} state what databaseState said
 * @param {string | undefined} [createProblem] after CREATE DATABASE: undefined when it worked
 * @returns {Finding}
 */
export function databaseFinding(url, state, createProblem) {
  const at = shown(url);
  if (state === 'ok') return { state: 'ok', service: 'PostgreSQL', at };
  if (state === 'no-database') {
    return createProblem === undefined
      ? { state: 'fixed', service: 'PostgreSQL', at, note: 'created the database' }
      : { state: 'missing', service: 'PostgreSQL', at, note: `the database does not exist and could not be created (${createProblem}): ${HOW.database}` };
  }
  return { state: 'missing', service: 'PostgreSQL', at, note: `${state === 'refused' ? 'nothing answers' : state}: ${HOW.postgres}` };
}

/**
 * @param {string} url REDIS_URL
 * @param {string} state what redisState said
 * @returns {Finding}
 */
export function redisFinding(url, state) {
  const at = shown(url);
  if (state === 'ok') return { state: 'ok', service: 'Redis', at };
  return { state: 'missing', service: 'Redis', at, note: `${state === 'refused' ? 'nothing answers' : state}: ${HOW.redis}` };
}

/**
 * @param {string} path CHROMIUM_PATH or its default
 * @param {string | undefined} missing chromiumMissing's reason
 * @param {boolean} ci CI=true: the browser tests must run
 * @returns {Finding}
 */
export function chromiumFinding(path, missing, ci) {
  if (!missing) return { state: 'ok', service: 'chromium', at: path };
  return ci ? { state: 'missing', service: 'chromium', at: path, note: `the browser tests must run under CI=true, and there is ${missing}` } : { state: 'skip', service: 'browser tests', at: path, note: missing };
}

/**
 * The old name of RABBITMQ_MANAGEMENT_URL, no longer read: a run with it alone would test another
 * broker's API than the one meant.
 * @param {Record<string, string | undefined>} env
 * @returns {Finding[]}
 */
export function renamedVariables(env) {
  if (env.AMQP_MANAGEMENT_URL === undefined || env.RABBITMQ_MANAGEMENT_URL !== undefined) return [];
  return [{ state: 'missing', service: 'AMQP_MANAGEMENT_URL', at: shown(env.AMQP_MANAGEMENT_URL), note: 'is no longer read: rename it RABBITMQ_MANAGEMENT_URL' }];
}

/**
 * The lines to print: what answers (one line), each fix, each skipped group, each missing service;
 * ok is false when something is missing.
 * @param {Finding[]} findings
 */
export function report(findings) {
  const ready = findings.filter((f) => f.state === 'ok');
  const lines = ready.length > 0 ? [`preflight: ready: ${ready.map((f) => `${f.service} ${f.at}`).join(', ')}`] : [];
  for (const f of findings) {
    if (f.state === 'fixed') lines.push(`preflight: fixed: ${f.service} ${f.at}: ${f.note}`);
    if (f.state === 'skip') lines.push(`preflight: will skip the ${f.service}: ${f.note}`);
  }
  const missing = findings.filter((f) => f.state === 'missing');
  for (const f of missing) lines.push(`preflight: MISSING ${f.service} ${f.at}: ${f.note}`);
  if (missing.length > 0) lines.push(`preflight: npm test stopped before the build: ${missing.length === 1 ? 'one thing it needs is' : `${missing.length} things it needs are`} missing (above; docs/development.md, "What the tests need").`);
  return { lines, ok: missing.length === 0 };
}

