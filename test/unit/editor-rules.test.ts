/**
 * The editor's shared module (src/editor, bundled into resources/editor.js) validates with the
 * runtime's own rules: what a dialog accepts, the runtime reads the same way.
 */
import assert from 'node:assert/strict';
import * as editor from '../../src/editor/index';
import { choices, numberProperty, withVersion } from '../../src/nodes/shared/editor-properties';
import { topologyProblemsOf } from '../../src/nodes/shared/topology-definition';
import { readNumberField, type NumberField } from '../../src/lib/rules/number-fields';
import { NUMBER_FIELDS } from '../../src/migrate/node-tables';
import { CONSUMER_MODES, CONSUMER_NUMBERS, CONSUMER_VERSIONS } from '../../src/nodes/retry-consumer/properties';
import { BROKER_NUMBERS, BROKER_VERSIONS } from '../../src/nodes/shared/broker-properties';
import { missingProperties as missingOf } from '../../src/nodes/shared/properties';
import { EXCHANGE_TYPES } from '../../src/lib/topology/plan';
import { parseDelays } from '../../src/lib/topology/parse';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DIALOGS } from '../../src/editor';
import { redactUrl } from '../../src/lib/connection/settings';
import { redisUrlProblem } from '../../src/lib/dedupe/redis-url';
import { parseConnectionString } from '../../src/lib/postgres/settings';

// The editor's RED: a catalog without the common texts, so problems fall back to their English.
(globalThis as Record<string, unknown>).RED = { _: (key: string) => key.slice(key.indexOf(':') + 1) };

const ask = { label: 'Field' };

describe('editor rules (src/editor)', function () {
  it('accepts the retry delays the runtime parses and refuses the others, naming the part', function () {
    for (const text of ['3000', '1s, 10s, 1m', '500ms']) {
      assert.doesNotThrow(() => parseDelays(text));
      assert.equal(editor.validators.delays.call({}, text, ask), true, text);
    }
    assert.throws(() => parseDelays('1s, soon'));
    assert.match(String(editor.validators.delays.call({}, '1s, soon', ask)), /^Field: retry delay 'soon' is not a duration/);
    assert.equal(editor.validators.delays.call({}, '${RETRY_DELAY}', ask), true, 'an environment reference is resolved at deploy');
    assert.equal(editor.validators.delays.call({}, '', undefined), false);
  });

  it('takes number defaults and ranges from the runtime table', function () {
    for (const [type, fields] of Object.entries(NUMBER_FIELDS)) {
      for (const [name, field] of Object.entries(fields as Record<string, NumberField>)) {
        const property = numberProperty(field, name);
        assert.equal(property.value, field.fallback, `${type}.${name}`);
        for (const value of [String((field.min ?? 0) - 1), String(field.min ?? 0), 'abc', '1.5']) {
          const runtimeOk = !('problem' in readNumberField(value, field));
          assert.equal(property.validate.call({}, value) === true, runtimeOk, `${type}.${name} = ${value}`);
        }
      }
    }
  });

  it('offers exactly the exchange types the topology accepts', function () {
    assert.deepEqual([...choices.exchangeTypes], [...EXCHANGE_TYPES]);
  });

  it('accepts a property an older saved node lacks, but not on a current node', function () {
    const defaults = withVersion(CONSUMER_VERSIONS, { mode: { value: 'retry', validate: editor.validators.oneOf(CONSUMER_MODES) } }) as Record<
      string,
      { value: unknown; validate?: editor.Validator }
    >;
    assert.equal(defaults.version?.value, 6);
    const validate = defaults.mode?.validate;
    assert.ok(validate);
    assert.equal(validate.call({}, undefined), true, 'saved before mode existed');
    assert.equal(validate.call({ version: 2 }, undefined), false, 'saved with mode, now missing');
    const dedupe = { dedupe: '', dedupeKeyType: 'messageId', dedupeKey: '', dedupeNoKey: 'process', dedupeStoreDown: 'pause' };
    const protection = { circuitActivation: '20', circuitTripPercent: '15', circuitWindow: '10', circuitRestart: '30', circuitRestartMax: '300', circuitProbes: '5', rateLimit: '0' };
    const batch = { batchSize: '500', batchWait: '200' };
    assert.deepEqual(missingOf(CONSUMER_VERSIONS, CONSUMER_NUMBERS, {}), { mode: 'retry', orderedPause: '5', parkingWatch: '30', statsEvery: '60', ...dedupe, ...protection, ...batch });
    assert.deepEqual(missingOf(CONSUMER_VERSIONS, CONSUMER_NUMBERS, { version: 2 }), { statsEvery: '60', ...dedupe, ...protection, ...batch });
    assert.deepEqual(missingOf(CONSUMER_VERSIONS, CONSUMER_NUMBERS, { version: 3 }), { ...dedupe, ...protection, ...batch });
    assert.deepEqual(missingOf(CONSUMER_VERSIONS, CONSUMER_NUMBERS, { version: 4 }), { ...protection, ...batch });
    assert.deepEqual(missingOf(CONSUMER_VERSIONS, CONSUMER_NUMBERS, { version: 5 }), batch);
    assert.deepEqual(missingOf(CONSUMER_VERSIONS, CONSUMER_NUMBERS, { version: 6 }), {});
  });

  it('takes an env field (typedInput type env) as a variable name, a text field by its own rule; older brokers are text', function () {
    // No dialog open: the validator reads the node's saved type.
    (globalThis as Record<string, unknown>).$ = () => ({ length: 0 });
    const url = editor.envOr('url', editor.validators.brokerUrl);
    assert.equal(url.call({ urlType: 'env' }, 'AMQP_URL', ask), true);
    assert.equal(url.call({ urlType: 'env' }, '${AMQP_URL}', ask), true);
    assert.match(String(url.call({ urlType: 'env' }, 'amqp://host', ask)), /^Field: must be the name of an environment variable/);
    assert.match(String(url.call({ urlType: 'str' }, 'http://host', ask)), /amqp:\/\/ or amqps:\/\//);
    assert.equal(url.call({}, '${AMQP_URL}', ask), true, 'a flow saved before the type: ${VAR} text as before');
    assert.deepEqual(missingOf(BROKER_VERSIONS, BROKER_NUMBERS, { version: 2, bufferMessages: 1000, bufferMiB: 16 }), { urlType: 'str', hostType: 'str', managementUrlType: 'str' });
    assert.deepEqual([...editor.envFields], ['url', 'host', 'managementUrl']);
    assert.equal(editor.envLabel('AMQP_URL', 'env'), '${AMQP_URL}');
    assert.equal(editor.envLabel('rabbit', 'str'), 'rabbit');
  });

  it('refuses reserved and over-long names like the runtime', function () {
    const name = editor.validators.name();
    assert.equal(name.call({}, 'orders', ask), true);
    assert.match(String(name.call({}, 'amq.orders', ask)), /reserved/);
    assert.match(String(name.call({}, 'ä'.repeat(128), ask)), /255 bytes/);
  });

  it('refuses in the dialog what the runtime refuses at deploy: queue arguments the topology sets, equal queue names', function () {
    const base = { mainQueue: 'orders', mainExchange: 'orders-x', routingKeys: 'order.created', retryDelay: '5000', maxAttempts: '3', mainQueueArgs: '{}', retryQueueArgs: '{}', parkingQueueArgs: '{}' };
    assert.deepEqual(topologyProblemsOf(base), []);
    assert.match(topologyProblemsOf({ ...base, mainQueueArgs: '{"x-dead-letter-exchange": "other"}' }).join(), /main queue argument x-dead-letter-exchange is set by the retry topology/);
    assert.match(topologyProblemsOf({ ...base, parkingQueue: 'orders' }).join(), /must all be different/);
    assert.match(topologyProblemsOf({ ...base, mainExchange: '' }).join(), /routing keys need a main exchange/);
  });

  it('checks database and Redis URLs and table names in the store dialogs with the runtime readers', function () {
    const registered = Object.fromEntries(['retry-postgres', 'retry-dedupe', 'outbox-write'].map((type) => [type, DIALOGS[type]?.(editor.i18n(type))]));
    (globalThis as Record<string, unknown>).$ = () => ({ length: 0 });
    const check = (type: string, field: string, node: Record<string, unknown>, value: string): boolean => registered[type]?.defaults[field]?.validate?.call(node, value, undefined) === true;
    for (const [value, ok] of [['postgres://app@db:5432/orders', true], ['postgresql://db/orders', true], ['http://db/orders', false], ['not a url', false], ['${DATABASE_URL}', true]] as const) {
      assert.equal(check('retry-postgres', 'url', { urlType: 'str' }, value), ok, value);
      if (!value.startsWith('$')) assert.equal(!('problem' in parseConnectionString(value)), ok, value);
    }
    for (const [value, ok] of [
      ['redis://cache:6379/0', true],
      ['rediss://cache', true],
      ['redis://cache/abc', false],
      ['http://cache', false],
      ['redis+sentinel://s1:26379,s2:26379/mymaster', true],
      ['redis+sentinel://s1:26379', false],
      ['redis+cluster://n1:6379,n2:6379', true],
      ['redis+cluster://n1/0', false],
    ] as const) {
      assert.equal(check('retry-dedupe', 'url', { kind: 'redis', urlType: 'str' }, value), ok, value);
      assert.equal(redisUrlProblem(value) === undefined, ok, value);
    }
    for (const [url, prefix, ok] of [
      ['redis+cluster://n1', 'app:{x}:', false],
      ['redis+cluster://n1', 'app:', true],
      ['redis://n1', 'app:{x}:', true],
    ] as const) {
      assert.equal(check('retry-dedupe', 'prefix', { kind: 'redis', url }, prefix), ok, `${url} ${prefix}`);
    }
    for (const [value, ok] of [['outbox', true], ['app.outbox', true], ['', true], ['a.b.c', false], ['x'.repeat(64), false], ['bad name', false]] as const) {
      assert.equal(check('outbox-write', 'table', {}, value), ok, JSON.stringify(value));
    }
    // Labels show a URL without its password, as the runtime's logs do.
    assert.equal(registered['retry-postgres']?.label?.call({ url: 'postgres://app:secret@db/orders', urlType: 'str' }), redactUrl('postgres://app:secret@db/orders'));
    assert.doesNotMatch(registered['retry-dedupe']?.label?.call({ kind: 'redis', url: 'redis://:secret@cache:6379', urlType: 'str' }) ?? '', /secret/);
  });

  it('keeps every dialog in its node folder, registered by src/editor.ts: the .html files hold templates, help and the bundle include only', function () {
    const nodes = path.resolve(__dirname, '../../src/nodes');
    const types = Object.keys((JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } })['node-red'].nodes);
    assert.deepEqual(Object.keys(DIALOGS).sort(), [...types].sort(), 'one dialog module per node type');
    for (const type of types) {
      const html = readFileSync(path.join(nodes, type, `${type}.html`), 'utf8');
      for (const [tag] of html.matchAll(/<script\b[^>]*>/g)) {
        assert.match(tag, /type="text\/html"|\bsrc="resources\/node-red-contrib-rabbitmq-retry\/editor\.js"/, `${type}.html: ${tag}`);
      }
      assert.ok(html.includes('src="resources/node-red-contrib-rabbitmq-retry/editor.js"'), `${type}.html loads the bundle (the build adds its registration)`);
    }
    assert.ok(readdirSync(nodes).length > 0);
  });
});
