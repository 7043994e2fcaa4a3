/**
 * Runtime texts (status, errors) from the node catalogs, `locales/<lang>/<node set>.json`, in the
 * language the Node-RED runtime runs in (its `lang` setting or the system locale). Dynamic texts
 * from the broker or `src/lib` stay English and are passed in as parameters.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { NodeAPI } from './node-red';

const PACKAGE = 'node-red-contrib-rabbitmq-retry';
const english = new Map<string, unknown>();
const ENGLISH_PLURALS = new Intl.PluralRules('en-US');

/** The en-US catalog of a node set, next to its compiled .js (dist/nodes/<set>/locales/en-US). */
function englishCatalog(set: string): unknown {
  if (!english.has(set)) {
    try {
      english.set(set, JSON.parse(readFileSync(path.join(__dirname, '..', set, 'locales', 'en-US', `${set}.json`), 'utf8')));
    } catch {
      english.set(set, {});
    }
  }
  return english.get(set);
}

function interpolate(text: string, args: Record<string, unknown> | undefined): string {
  return text.replace(/__(\w+)__/g, (whole, name: string) => {
    const value = args?.[name];
    if (value === undefined) return whole;
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
  });
}

export type Translate = (key: string, args?: Record<string, unknown>) => string;

/**
 * `t('retry-consumer.status.stopped')`: the first part names the node set whose catalog holds the
 * key. A runtime without the package's catalogs (node-red-node-test-helper returns the key) gets
 * the en-US text from the same catalog file.
 */
export function translator(RED: Pick<NodeAPI, '_'>): Translate {
  return (key, args) => {
    const set = key.slice(0, key.indexOf('.'));
    const full = `${PACKAGE}/${set}:${key}`;
    const text = RED._(full, args);
    if (typeof text === 'string' && text !== full && text !== key && text !== '') return text;
    const lookUp = (k: string): unknown => k.split('.').reduce<unknown>((node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined), englishCatalog(set));
    // A count picks the plural form, as i18next does (`_one`, `_other`).
    const count = args?.count;
    const found = lookUp(key) ?? (typeof count === 'number' ? (lookUp(`${key}_${ENGLISH_PLURALS.select(count)}`) ?? lookUp(`${key}_other`)) : undefined);
    return typeof found === 'string' ? interpolate(found, args) : key;
  };
}

/**
 * A status text the editor shows in its own language: the namespaced catalog key
 * (`node-red-contrib-rabbitmq-retry/retry-broker:retry-broker.status.connected`), which the editor
 * translates for whoever looks, as core nodes send `node-red:common.status.connected`. For statuses
 * without parameters; a text with numbers or names is translated here, in the runtime's language.
 */
export function statusKey(key: string): string {
  return `${PACKAGE}/${key.slice(0, key.indexOf('.'))}:${key}`;
}
