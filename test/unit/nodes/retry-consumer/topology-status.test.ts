/** A failed topology check as ONE status line, in every locale; the error keeps every sentence. */
import assert from 'node:assert/strict';
import type { ObjectCheck } from '../../../../src/lib/topology/apply';
import { translator } from '../../../../src/nodes/shared/i18n';
import { topologyStatusText } from '../../../../src/nodes/retry-consumer/topology-status';

const object = (kind: ObjectCheck['kind'], name: string, state: ObjectCheck['state']): ObjectCheck => ({ kind, name, state, differences: [], problems: [] });
const english = translator({ _: (key: string) => key });

/** The runtime's RED._ with the package's catalogs of one language. */
function runtimeIn(lang: string) {
  return translator({
    _: (key: string, args?: Record<string, unknown>) => {
      const [set, path] = key.split('/')[1]!.split(':') as [string, string];
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- catalogs are JSON files
      const catalog = require(`../../../../src/nodes/${set}/locales/${lang}/${set}.json`) as Record<string, unknown>;
      const text = path.split('.').reduce<unknown>((o, part) => (o as Record<string, unknown> | undefined)?.[part], catalog);
      return typeof text === 'string' ? text.replace(/__(\w+)__/g, (_m, name: string) => String(args?.[name])) : key;
    },
  });
}

describe('topology check status (one line)', () => {
  const objects = [object('exchange', 'x', 'missing'), object('exchange', 'ok', 'ok'), object('queue', 'a', 'missing'), object('queue', 'b', 'missing'), object('queue', 'r', 'differs')];

  it('lists every missing object in one sentence, then those that differ', () => {
    assert.equal(topologyStatusText(objects, english), "topology check failed: missing exchange 'x', queue 'a', queue 'b'; arguments differ: queue 'r'");
  });

  it('names the values of a single object that differs: broker and config, per argument', () => {
    const ttl: ObjectCheck = { kind: 'queue', name: 'retry-queue', state: 'differs', differences: [{ argument: 'x-message-ttl', broker: 30000, config: 5000 }], problems: [] };
    assert.equal(topologyStatusText([ttl, object('queue', 'main', 'ok')], english), "topology check failed: queue 'retry-queue' x-message-ttl 30000 on the broker, 5000 in the config");
    const dlx: ObjectCheck = { ...ttl, differences: [{ argument: 'x-dead-letter-exchange', broker: undefined, config: 'retry' }] };
    assert.equal(topologyStatusText([dlx], runtimeIn('ru')), "проверка топологии не прошла: очередь 'retry-queue' x-dead-letter-exchange нет на брокере, 'retry' в конфигурации");
  });

  it("names '' as the default exchange where the argument names an exchange, in every locale", () => {
    const dlx: ObjectCheck = { kind: 'queue', name: 'main', state: 'differs', differences: [{ argument: 'x-dead-letter-exchange', broker: undefined, config: '' }], problems: [] };
    assert.equal(topologyStatusText([dlx], runtimeIn('en-US')), "topology check failed: queue 'main' x-dead-letter-exchange none on the broker, the default exchange ('') in the config");
    assert.match(topologyStatusText([dlx], runtimeIn('ru'), 200) ?? '', /exchange по умолчанию \(''\) в конфигурации/);
    assert.match(topologyStatusText([dlx], runtimeIn('uk'), 200) ?? '', /exchange за замовчуванням \(''\) у конфігурації/);
    const mode: ObjectCheck = { ...dlx, differences: [{ argument: 'x-queue-mode', broker: undefined, config: '' }] };
    assert.match(topologyStatusText([mode], runtimeIn('en-US')) ?? '', /'' in the config/);
  });

  it('says nothing when every object is fine', () => {
    assert.equal(topologyStatusText([object('queue', 'a', 'ok')], english), undefined);
  });

  it('cuts a long list for the status bar and says how many more the log names', () => {
    const many = Array.from({ length: 8 }, (_, i) => object('queue', `orders.retry.tier-${i}.with-a-long-name`, 'missing'));
    const text = topologyStatusText(many, english) ?? '';
    assert.ok(text.length <= 120, text);
    assert.match(text, /^topology check failed: missing queue 'orders\.retry\.tier-0\.with-a-long-name'.* … \+\d more \(see the log\)$/);
    assert.equal(text.split('does not exist').length, 1);
  });

  it('is one translated sentence in ru and uk', () => {
    assert.equal(topologyStatusText(objects.slice(0, 4), runtimeIn('ru')), "проверка топологии не прошла: нет: обменник 'x', очередь 'a', очередь 'b'");
    assert.equal(topologyStatusText(objects.slice(0, 4), runtimeIn('uk')), "перевірка топології не пройшла: немає: обмінник 'x', черга 'a', черга 'b'");
  });
});
