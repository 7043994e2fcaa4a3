/** Runtime texts: the runtime's catalog when it has one, else the en-US text of the same catalog. */
import assert from 'node:assert/strict';
import { translator } from '../../src/nodes/shared/i18n';

describe('runtime texts (translator)', function () {
  it('uses the text the runtime gives for the namespaced key', function () {
    const seen: string[] = [];
    const t = translator({
      _: (key: string, args?: Record<string, unknown>) => {
        seen.push(key);
        return `остановлен ${JSON.stringify(args?.n)}`;
      },
    });
    assert.equal(t('retry-consumer.status.stopped', { n: 1 }), 'остановлен 1');
    assert.deepEqual(seen, ['node-red-contrib-rabbitmq-retry/retry-consumer:retry-consumer.status.stopped']);
  });

  it('falls back to the en-US catalog, filled in, when the runtime has no catalog (it returns the key)', function () {
    const t = translator({ _: (key: string) => key });
    assert.equal(t('retry-consumer.status.stopped'), 'stopped');
    assert.equal(t('park-replay.status.replayed', { count: 2, left: 0 }), 'replayed 2, 0 left');
    assert.equal(t('retry-consumer.status.no-such-key'), 'retry-consumer.status.no-such-key');
  });

  it('has ru and uk catalogs for every node, with no key the en-US catalog lacks (missing ones fall back to English)', function () {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- catalogs are JSON files
    const load = (lang: string, set: string): Record<string, Record<string, unknown>> => require(`../../src/nodes/${set}/locales/${lang}/${set}.json`);
    const keys = (o: unknown, prefix = ''): string[] =>
      o && typeof o === 'object' ? Object.entries(o).flatMap(([k, v]) => keys(v, `${prefix}${k}.`)) : [prefix.slice(0, -1)];
    for (const set of ['retry-broker', 'retry-config', 'retry-consumer', 'retry-settle', 'park-publisher', 'retry-publish', 'park-replay']) {
      const english = new Set(keys(load('en-US', set)));
      for (const lang of ['ru', 'uk']) {
        const translated = keys(load(lang, set));
        assert.deepEqual(translated.filter((k) => !english.has(k)), [], `${lang}/${set}.json has keys en-US does not`);
        assert.ok(translated.some((k) => k.includes('.status.') || k.includes('.label.')), `${lang}/${set}.json translates nothing`);
      }
    }
  });
});
