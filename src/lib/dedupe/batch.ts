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

/**
 * The distinct names of a batch (keys already made strings): `at` maps each input to its distinct
 * name, undefined when they all are distinct (the usual batch: nothing to map back).
 */
export function distinctNames(names: readonly string[]): { unique: readonly string[]; at: number[] | undefined } {
  const seen = new Set(names);
  if (seen.size === names.length) return { unique: names, at: undefined };
  const index = new Map<string, number>();
  const unique: string[] = [];
  const at = names.map((name) => {
    let i = index.get(name);
    if (i === undefined) {
      i = unique.push(name) - 1;
      index.set(name, i);
    }
    return i;
  });
  return { unique, at };
}
