/** Store calls take batches; a key twice in one batch is asked once and answered twice. Pure. */
import type { DedupeKey } from './store';

/** The distinct keys of a batch, and for each input the index of its distinct key. */
export function distinctKeys(keys: readonly DedupeKey[]): { unique: DedupeKey[]; at: number[] } {
  const seen = new Map<string, number>();
  const unique: DedupeKey[] = [];
  const at = keys.map((k) => {
    const id = `${k.scope.length}:${k.scope}:${k.key}`;
    let i = seen.get(id);
    if (i === undefined) {
      i = unique.push(k) - 1;
      seen.set(id, i);
    }
    return i;
  });
  return { unique, at };
}
