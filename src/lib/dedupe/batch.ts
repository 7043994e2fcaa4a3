/** Store calls take batches; a key twice in one batch is asked once and answered twice. Pure. */
import type { DedupeKey } from './store';

/** The distinct items of a list by an id, and for each input the index of its distinct item. */
function distinctBy<T>(items: readonly T[], idOf: (item: T) => string): { unique: T[]; at: number[] } {
  const seen = new Map<string, number>();
  const unique: T[] = [];
  const at = items.map((item) => {
    const id = idOf(item);
    let i = seen.get(id);
    if (i === undefined) {
      i = unique.push(item) - 1;
      seen.set(id, i);
    }
    return i;
  });
  return { unique, at };
}

/** The distinct keys of a batch, and for each input the index of its distinct key. */
export function distinctKeys(keys: readonly DedupeKey[]): { unique: DedupeKey[]; at: number[] } {
  return distinctBy(keys, (k) => `${k.scope.length}:${k.scope}:${k.key}`);
}

/**
 * The distinct names of a batch (keys already made strings): `at` maps each input to its distinct
 * name, undefined when they all are distinct (the usual batch: nothing to map back).
 */
export function distinctNames(names: readonly string[]): { unique: readonly string[]; at: number[] | undefined } {
  if (new Set(names).size === names.length) return { unique: names, at: undefined };
  return distinctBy(names, (name) => name);
}
