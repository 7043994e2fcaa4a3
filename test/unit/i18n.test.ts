/** Runtime texts: the runtime's catalog when it has one, else the en-US text of the same catalog. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
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

  it('has ru and uk catalogs for every node with every en-US key (each plural form of the language), and none en-US lacks', function () {
    for (const set of NODE_SETS) {
      const english = requiredKeys(flatten(catalog('en-US', set)), 'en-US');
      for (const lang of ['ru', 'uk']) {
        const translated = flatten(catalog(lang, set));
        const needed = requiredKeys(flatten(catalog('en-US', set)), lang);
        const known = new Set([...english, ...needed]);
        assert.deepEqual(Object.keys(translated).filter((k) => !known.has(k)), [], `${lang}/${set}.json has keys en-US does not`);
        assert.deepEqual(needed.filter((k) => !(k in translated)), [], `${lang}/${set}.json lacks keys`);
      }
    }
  });

  it('translates every user-visible word: no ru or uk text equals the en-US one unless it is a name or a literal', function () {
    const same: string[] = [];
    for (const set of NODE_SETS) {
      const english = flatten(catalog('en-US', set));
      for (const lang of ['ru', 'uk']) {
        for (const [key, text] of Object.entries(flatten(catalog(lang, set)))) {
          if (text !== english[key] || KEPT_IN_ENGLISH.test(key)) continue;
          // Nothing to translate: placeholders, msg properties and punctuation only.
          if (!/\p{L}/u.test(text.replace(/__\w+__/g, '').replace(/msg\.[\w.]+/g, ''))) continue;
          same.push(`${lang}/${set}: ${key} = ${JSON.stringify(text)}`);
        }
      }
    }
    assert.deepEqual(same, []);
  });

  it('writes a unit one way per language, catalogs and help alike (seconds, and what 0 means)', function () {
    const odd: string[] = [];
    for (const [lang, rule] of Object.entries(UNIT_RULES)) {
      for (const set of NODE_SETS) {
        const texts = [...Object.values(flatten(catalog(lang, set))), ...helpOf(lang, set)];
        for (const text of texts) {
          for (const zero of text.matchAll(/\b0 = ([^)<,:]+)/gu)) if (!rule.zero.includes(zero[1]!.trim())) odd.push(`${lang}/${set}: 0 = ${zero[1]}`);
          for (const unit of text.matchAll(rule.shortSeconds)) odd.push(`${lang}/${set}: ${unit[0]}`);
        }
      }
    }
    assert.deepEqual(odd, []);
  });

  it('uses plural forms, never "message(s)" or a fixed case after a number', function () {
    const found: string[] = [];
    for (const lang of ['en-US', 'ru', 'uk']) {
      for (const set of NODE_SETS) {
        for (const [key, text] of Object.entries(flatten(catalog(lang, set)))) {
          if (/\p{L}\((?:s|es|а|и|ы|ов|ей|ів|е\|я)\)/u.test(text)) found.push(`${lang}/${set}: ${key}`);
        }
        for (const text of helpOf(lang, set)) if (/\p{L}\((?:s|es|а|и|ы|ов|ів)\)/u.test(text.replace(/<code>[^<]*<\/code>/g, ''))) found.push(`${lang}/${set} help`);
      }
    }
    for (const file of filesUnder(path.join(__dirname, '../../src/lib'))) {
      if (/\w\(s\)/.test(readFileSync(file, 'utf8').replace(/^\s*(\/\*\*|\*|\/\/).*$/gm, ''))) found.push(path.relative(path.join(__dirname, '../..'), file));
    }
    assert.deepEqual(found, []);
  });

  it('writes statuses with characters a bare Linux desktop has (DejaVu Sans): no symbol that shows as an empty box', function () {
    // Status texts appear under nodes on the canvas; Ⓟ or ⧉ need a symbol font Debian's default desktop lacks.
    const odd: string[] = [];
    const check = (where: string, text: string): void => {
      const bad = Array.from(text).filter((c) => !STATUS_CHARACTERS.test(c)); // code points: each symbol once
      if (bad.length > 0) odd.push(`${where}: ${[...new Set(bad)].join(' ')}`);
    };
    for (const lang of ['en-US', 'ru', 'uk']) {
      for (const set of NODE_SETS) {
        for (const [key, text] of Object.entries(flatten(catalog(lang, set)))) if (/(^|\.)status\./.test(key)) check(`${lang}/${set}: ${key}`, text);
      }
    }
    for (const file of filesUnder(path.join(__dirname, '../../src/nodes'))) {
      const code = readFileSync(file, 'utf8').replace(/^\s*(\/\*\*|\*|\/\/).*$/gm, '').replace(/\/\/.*$/gm, '');
      check(path.relative(path.join(__dirname, '../..'), file), code);
    }
    assert.deepEqual(odd, []);
  });

  it('picks the plural form of the language (i18next 21+ suffixes, as Node-RED 4.1 and 5.0 runtime and editor)', async function () {
    // The i18next Node-RED's runtime runs (@node-red/util's own; the editor bundles a release of the same major).
    const util = path.dirname(require.resolve('@node-red/util/package.json'));
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the runtime's copy, found from @node-red/util
    const i18next = require(require.resolve('i18next', { paths: [util] })) as RuntimeI18next;
    const resources: Record<string, Record<string, unknown>> = {};
    for (const lang of ['en-US', 'ru', 'uk']) resources[lang] = { 'park-replay': catalog(lang, 'park-replay') };
    const i18n = i18next.createInstance();
    await i18n.init({ showSupportNotice: false, resources, lng: 'en-US', fallbackLng: false, interpolation: { prefix: '__', suffix: '__', escapeValue: false } });
    const t = (lang: string, key: string, count: number): string => i18n.getFixedT(lang, 'park-replay')(key, { count });
    assert.equal(t('en-US', 'park-replay.browser.body.hexMore', 1), '… 1 more byte not shown in hex');
    assert.equal(t('en-US', 'park-replay.browser.body.hexMore', 7), '… 7 more bytes not shown in hex');
    assert.match(t('en-US', 'park-replay.browser.confirm.purge', 1), /^Delete 1 parked message\?/);
    assert.match(t('en-US', 'park-replay.browser.confirm.purge', 3), /^Delete 3 parked messages\?/);
    assert.match(t('ru', 'park-replay.browser.confirm.purge', 1), /^Удалить 1 припаркованное сообщение\?/);
    assert.match(t('ru', 'park-replay.browser.confirm.purge', 3), /^Удалить 3 припаркованных сообщения\?/);
    assert.match(t('ru', 'park-replay.browser.confirm.purge', 5), /^Удалить 5 припаркованных сообщений\?/);
    assert.match(t('uk', 'park-replay.browser.confirm.purge', 21), /^Видалити 21 припарковане повідомлення\?/);
    assert.match(t('uk', 'park-replay.browser.confirm.purge', 22), /^Видалити 22 припарковані повідомлення\?/);
    assert.match(t('uk', 'park-replay.browser.confirm.purge', 11), /^Видалити 11 припаркованих повідомлень\?/);
  });
});

/** What the test uses of i18next (the runtime's copy sits under @node-red/util, without types here). */
interface RuntimeI18next {
  createInstance(): {
    init(options: Record<string, unknown>): Promise<unknown>;
    getFixedT(lang: string, ns: string): (key: string, options: Record<string, unknown>) => string;
  };
}

/** Every node set with catalogs. */
const NODE_SETS = readdirSync(path.join(__dirname, '../../src/nodes')).filter((set) => existsSync(path.join(__dirname, '../../src/nodes', set, 'locales')));

/** Kept in English on purpose: node type names (as core nodes keep theirs), protocol terms and msg.topic literals. */
const KEPT_IN_ENGLISH =
  /\.paletteLabel$|^retry-broker\.label\.(url|vhost|heartbeat|managementUrl)$|^retry-postgres\.label\.url$|^park-replay\.browser\.body\.(json|hex)$|^retry-consumer\.(label\.(prefetch|decode)|dedupeKeyType\.messageId|inputLabel)$|^outbox-relay\.(inputLabel|nodeLabel)$|^outbox-write\.(outputLabel|nodeLabel\.event)$/;

/** How each language writes seconds and what 0 means in a number field. */
/** Letters, digits and the few symbols DejaVu Sans (Debian's default desktop font) draws: ✓ ↻ ⚑ ≡ · and dashes, arrows, quotes. */
const STATUS_CHARACTERS = /[\p{Script=Latin}\p{Script=Cyrillic}\p{N}\s\x20-\x7e·✓↻⚑≡…–—→←‘’“”«»×]/u;
const UNIT_RULES: Record<string, { zero: string[]; shortSeconds: RegExp }> = {
  'en-US': { zero: ['off', 'keep'], shortSeconds: /^s(?: \(|$)|\bs \(0/gu },
  ru: { zero: ['выкл.', 'хранить'], shortSeconds: /^с(?: \(|$)|\bс \(0/gu },
  uk: { zero: ['вимк.', 'зберігати'], shortSeconds: /^с(?: \(|$)|\bс \(0/gu },
};

// eslint-disable-next-line @typescript-eslint/no-require-imports -- catalogs are JSON files
const catalog = (lang: string, set: string): unknown => require(`../../src/nodes/${set}/locales/${lang}/${set}.json`);

function flatten(o: unknown, prefix = ''): Record<string, string> {
  if (typeof o === 'string') return { [prefix.slice(0, -1)]: o };
  return Object.assign({}, ...Object.entries(o as Record<string, unknown>).map(([k, v]) => flatten(v, `${prefix}${k}.`)));
}

const PLURAL = /_(zero|one|two|few|many|other)$/;

/** The keys a language needs: en-US's, a plural group with each plural category of the language. */
function requiredKeys(english: Record<string, string>, lang: string): string[] {
  const categories = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
  const keys = new Set<string>();
  for (const key of Object.keys(english)) {
    if (PLURAL.test(key)) for (const c of categories) keys.add(key.replace(PLURAL, `_${c}`));
    else keys.add(key);
  }
  return [...keys];
}

/** The help of a node set in a language, as text lines (none when the set has no help in it). */
function helpOf(lang: string, set: string): string[] {
  const file = path.join(__dirname, '../../src/nodes', set, 'locales', lang, `${set}.html`);
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [];
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    return statSync(file).isDirectory() ? filesUnder(file) : file.endsWith('.ts') ? [file] : [];
  });
}
