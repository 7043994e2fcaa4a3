/**
 * What one store call carries (pure): the writes collected so far (completes, releases) and the
 * claims that may go with them. A claim of a key that is written in the same call, or whose write is
 * still in flight in an earlier call, waits for the next call: every part of one PostgreSQL statement
 * sees the table as it was before it, and calls in flight on two connections may run in any order, so
 * a claim must never pass a write of its key. A release of a key completed in the same call is
 * dropped (complete then release, or release then complete, both leave the key done).
 */

export interface ExchangePlan<C> {
  /** Claims that go now, in order. */
  claims: C[];
  /** Claims that wait for the next call, in order. */
  deferred: C[];
  /** Releases that go now. */
  releases: string[];
}

/**
 * `writing`: keys with a write in a call still in flight. `completes` and `releases`: this call's
 * writes. Claims keep their order in both lists.
 */
export function planExchange<C extends { key: string }>(
  claims: readonly C[],
  completes: readonly string[],
  releases: readonly string[],
  writing: { readonly size: number; has(key: string): boolean },
): ExchangePlan<C> {
  // One set of this call's writes, and only when something is checked against it.
  const completed = completes.length > 0 && (releases.length > 0 || claims.length > 0) ? new Set(completes) : undefined;
  const kept = completed === undefined ? [...releases] : releases.filter((key) => !completed.has(key));
  if (claims.length === 0) return { claims: [], deferred: [], releases: kept };
  if (completed === undefined && kept.length === 0 && writing.size === 0) return { claims: [...claims], deferred: [], releases: kept };
  const written = completed ?? new Set<string>();
  for (const key of kept) written.add(key);
  const now: C[] = [];
  const deferred: C[] = [];
  for (const claim of claims) (written.has(claim.key) || writing.has(claim.key) ? deferred : now).push(claim);
  return { claims: now, deferred, releases: kept };
}
