/**
 * The status line of a failed topology check: ONE sentence listing what is missing or differs, short
 * enough for the status bar; the node's error (and the log) keeps every object's full sentence.
 */
import { argumentValueText, type ObjectCheck } from '../../lib/topology';
import type { Translate } from '../shared/i18n';

/** Longer status texts are cut, naming how many objects were left out. */
export const STATUS_MAX_CHARS = 120;

const GROUPS = [
  ['missing', 'missing'],
  ['differs', 'differs'],
  ['error', 'unchecked'],
] as const;

/** `topology check failed: missing queue 'a', queue 'b', exchange 'x'`, in the runtime's language; undefined when nothing failed. */
export function topologyStatusText(objects: readonly ObjectCheck[], t: Translate, max = STATUS_MAX_CHARS): string | undefined {
  const failed = GROUPS.map(([state, key]) => ({ key, names: objects.filter((o) => o.state === state).map((o) => t(`retry-consumer.status.${o.kind}`, { name: o.name })) }));
  const total = failed.reduce((n, g) => n + g.names.length, 0);
  if (total === 0) return undefined;
  const text = (shown: number): string => {
    let left = shown;
    const parts: string[] = [];
    for (const group of failed) {
      const names = group.names.slice(0, Math.max(0, left));
      left -= names.length;
      if (names.length > 0) parts.push(t(`retry-consumer.status.${group.key}`, { objects: names.join(', ') }));
    }
    const more = shown < total ? t('retry-consumer.status.more', { count: total - shown }) : '';
    return t('retry-consumer.status.topologyFailed', { problems: parts.join('; ') }) + more;
  };
  // One object that differs: its values fit on the status, where the user looks first.
  const only = objects.filter((o) => o.state !== 'ok');
  const differs = only.length === 1 && only[0]?.state === 'differs' ? only[0] : undefined;
  if (differs && differs.differences.length > 0) {
    const values = differs.differences.map((d) => t('retry-consumer.status.value', { argument: d.argument, broker: shown(d.broker, d.argument, t), config: shown(d.config, d.argument, t) })).join('; ');
    const line = t('retry-consumer.status.topologyFailed', { problems: t('retry-consumer.status.differsValues', { object: t(`retry-consumer.status.${differs.kind}`, { name: differs.name }), values }) });
    if (line.length <= max) return line;
  }
  let shownCount = total;
  while (shownCount > 1 && text(shownCount).length > max) shownCount -= 1;
  return text(shownCount);
}

/** An argument's value as the status shows it: `none` when unset, the default exchange in words. */
function shown(value: unknown, argument: string, t: Translate): string {
  return argumentValueText(value, argument, { none: t('retry-consumer.status.none'), defaultExchange: t('retry-consumer.status.defaultExchange') });
}
