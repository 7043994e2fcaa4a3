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

/**
 * The distinct keys of a batch, and for each input the index of its distinct key; `at` undefined when
 * they all are distinct (the usual batch: nothing to map back). A batch of one scope (a gate's) is
 * checked by its key strings alone: no string made per key.
 */
export function distinctKeys(keys: readonly DedupeKey[]): { unique: readonly DedupeKey[]; at: number[] | undefined } {
  const scope = keys[0]?.scope;
  let oneScope = true;
  for (let i = 1; i < keys.length && oneScope; i += 1) oneScope = (keys[i] as DedupeKey).scope === scope;
  if (oneScope) {
    const names = new Set<string>();
    for (const k of keys) names.add(k.key);
    if (names.size === keys.length) return { unique: keys, at: undefined };
    return distinctBy(keys, (k) => k.key);
  }
  const mixed = distinctBy(keys, (k) => `${k.scope.length}:${k.scope}:${k.key}`);
  return mixed.unique.length === keys.length ? { unique: keys, at: undefined } : mixed;
}

/**
 * The distinct names of a batch (keys already made strings): `at` maps each input to its distinct
 * name, undefined when they all are distinct (the usual batch: nothing to map back).
 */
export function distinctNames(names: readonly string[]): { unique: readonly string[]; at: number[] | undefined } {
  if (new Set(names).size === names.length) return { unique: names, at: undefined };
  return distinctBy(names, (name) => name);
}

/** The keys of a batch that share one scope: their names, and where each is in the batch (undefined: the whole batch, in order). */
export interface ScopeGroup {
  scope: string;
  names: string[];
  positions: number[] | undefined;
}

/**
 * A batch's keys by scope, in the order each scope first comes: a store sends one statement per
 * scope, its key names in one list and the scope once. A gate's batches have one scope (the usual
 * case: one group, nothing to map back).
 */
export function byScope(keys: readonly DedupeKey[]): ScopeGroup[] {
  const scope = commonScope([keys]);
  if (scope !== undefined) return [{ scope, names: keys.map((k) => k.key), positions: undefined }];
  const groups = new Map<string, ScopeGroup & { positions: number[] }>();
  keys.forEach((k, i) => {
    let group = groups.get(k.scope);
    if (!group) {
      group = { scope: k.scope, names: [], positions: [] };
      groups.set(k.scope, group);
    }
    group.names.push(k.key);
    group.positions.push(i);
  });
  return [...groups.values()];
}

/**
 * The answers for a batch grouped by scope (`byScope`): `ask` answers one scope's names in order; each
 * answer goes to its key's place in the batch. One group (a gate's batch) is asked as it is.
 */
export async function answeredByScope<R>(groups: readonly ScopeGroup[], ask: (scope: string, names: string[]) => Promise<R[]>): Promise<R[]> {
  const [only] = groups;
  if (groups.length === 1 && only !== undefined && only.positions === undefined) return ask(only.scope, only.names);
  const results: R[] = [];
  await Promise.all(
    groups.map(async ({ scope, names, positions }) => {
      const answered = await ask(scope, names);
      answered.forEach((result, i) => (results[(positions as number[])[i] as number] = result));
    }),
  );
  return results;
}

/** The scope every key of the lists has; undefined when they have several (or there are none). */
export function commonScope(lists: ReadonlyArray<readonly DedupeKey[]>): string | undefined {
  let scope: string | undefined;
  for (const keys of lists) {
    for (const k of keys) {
      if (scope === undefined) scope = k.scope;
      else if (k.scope !== scope) return undefined;
    }
  }
  return scope;
}
