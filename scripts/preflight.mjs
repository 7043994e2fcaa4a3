// @ts-check
// `npm test`'s first step (pretest, before the build): checks what the suite needs — RabbitMQ, its
// management API, PostgreSQL with the database of DATABASE_URL, Redis, chromium for the browser tests —
// fixes what this machine lets it fix (starts this host's broker, enables its management plugin,
// creates the database), and stops at once with one line per missing service and how to provide it.
// Without chromium the browser tests are skipped (said here and at the end of the run), except under
// CI=true, where they must run.
import { brokerFinding, canEnable, chromiumFinding, databaseFinding, managementFinding, redisFinding, renamedVariables, report } from './preflight-report.mjs';
import { brokerTarget, chromiumMissing, enableManagement, ensureBroker, managementState, serviceUrls, shown } from './services.mjs';
import { createDatabase, databaseState, redisState } from './stores.mjs';

/** Checks (and fixes) every service, in parallel: the broker's management API once the broker answers. */
async function check() {
  const env = process.env;
  const urls = serviceUrls(env);
  const broker = brokerTarget(urls.amqp, env);
  const log = (/** @type {string} */ line) => console.log(`preflight: ${line}`);
  const rabbit = async () => {
    if (!broker) return [brokerFinding(urls.amqp, undefined)];
    const result = await ensureBroker(broker, log);
    if (!result.answers) return [brokerFinding(urls.amqp, result)];
    const state = await managementState(urls.management, broker);
    const enabling = state === 'refused' && canEnable(broker, urls.management);
    if (enabling) log(`nothing answers at ${shown(urls.management)}: enabling the broker's management plugin (rabbitmq-plugins enable rabbitmq_management) …`);
    return [brokerFinding(urls.amqp, result), managementFinding(urls.management, state, broker, enabling ? await enableManagement(urls.management, broker) : undefined)];
  };
  const database = async () => {
    const state = await databaseState(urls.database);
    return databaseFinding(urls.database, state, state === 'no-database' ? await createDatabase(urls.database) : undefined);
  };
  const redis = async () => redisFinding(urls.redis, await redisState(urls.redis));
  const [rabbitFindings, databaseF, redisF] = await Promise.all([rabbit(), database(), redis()]);
  return [...renamedVariables(env), ...rabbitFindings, databaseF, redisF, chromiumFinding(urls.chromium, chromiumMissing(env), env.CI === 'true')];
}

const { lines, ok } = report(await check());
for (const line of lines) console.log(line);
process.exit(ok ? 0 : 1);
