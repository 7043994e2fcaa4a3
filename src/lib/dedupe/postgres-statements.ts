/**
 * The PostgreSQL store's statements on its table, each named by its text (prepared once per
 * connection). Every statement is about the keys of one scope: the scope goes in once, the key names
 * as one array (a batch of a gate has one scope; the store splits any other by scope). Pure.
 */
import { createHash } from 'node:crypto';

type Named = { name: string; text: string };

export interface DedupeStatements {
  /** $1 scope, $2 keys, $3 owner, $4 lease ms: a row per key not taken (its 1-based `ord` and its row as it was). */
  claim: Named;
  /** The claim's parameters, then completes ($5 keys, $6 retention ms) written before the claims. */
  exchange: Named;
  /** The exchange's parameters, then releases ($7 keys, of the owner $3) written before the claims. */
  exchangeReleasing: Named;
  /** $1 scope, $2 keys, $3 retention ms. */
  complete: Named;
  /** $1 scope, $2 keys, $3 owner. */
  release: Named;
}

/** A statement named by its text: prepared once per connection; another table (or version) is another name. */
function named(text: string): Named {
  return { name: `rabbitmq_retry_dedupe_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text };
}

/**
 * The statements on a table. Claims: an ended lease or the owner's own claim is taken; the answer is
 * a row per key not taken (its position and its row as it was), none when all were taken (the usual
 * case), so the probe of the current row runs only for those (an anti join before the lateral;
 * measured: ~9 % less server CPU per key than answering every key, and no rows for the client to
 * decode). The exchanges write completes (and releases) before the claims: every part of one
 * statement sees the table as it was before it, which is why no key may be in two lists.
 * Rows are found by the primary key one input row at a time (`LATERAL … LIMIT 1`), never by a join
 * the planner may choose to run as a scan: a pooled connection keeps its plan, and one made while the
 * table was new and empty would scan the whole table on every call later (measured: 15 keys a call
 * took 1.5 ms at the start and 4.8 ms after 20 000 keys). So a release is an upsert too: it ends
 * the owner's claim (expired now: free to claim, swept later) through the primary key; a key without
 * a row gets an expired claim, which is the same as none. The parameters go in as `(SELECT $n)`: the
 * planner cannot see an array's length, so PostgreSQL keeps the generic plan after five calls; seeing
 * it, one-key calls (a quiet queue) always looked cheaper planned anew and every call paid its planning
 * (measured: a one-key exchange took 620 µs of server CPU planned anew, 360 µs on the generic plan).
 * The scope is one parameter, not an array as long as the keys: half the array for the client to
 * escape and for the server to parse (measured in `bench/tools/profile.ts dedupe-postgres`).
 */
export function dedupeStatements(t: string): DedupeStatements {
  const claims = `input AS (
           SELECT (SELECT $1::text) AS scope, key, ord FROM unnest((SELECT $2::text[])) WITH ORDINALITY AS i(key, ord)
         ), taken AS (
           INSERT INTO ${t} AS t (scope, key, state, owner, expires_at)
           SELECT scope, key, 'claimed', $3, now() + $4 * interval '1 millisecond' FROM input
           ON CONFLICT (scope, key) DO UPDATE SET state = 'claimed', owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
            WHERE t.expires_at <= now() OR (t.state = 'claimed' AND t.owner = EXCLUDED.owner)
           RETURNING key
         )
         SELECT i.ord, cur.state, cur.owner, (extract(epoch FROM cur.expires_at) * 1000)::bigint AS until
           FROM input i
           LEFT JOIN taken ON taken.key = i.key
           LEFT JOIN LATERAL (SELECT c.state, c.owner, c.expires_at FROM ${t} c WHERE c.scope = i.scope AND c.key = i.key LIMIT 1) cur ON true
          WHERE taken.key IS NULL`;
  const complete = (scope: string, keys: string, retention: string): string =>
    `INSERT INTO ${t} (scope, key, state, owner, expires_at)
       SELECT (SELECT ${scope}::text), key, 'done', NULL, now() + ${retention} * interval '1 millisecond' FROM unnest((SELECT ${keys}::text[])) AS i(key)
       ON CONFLICT (scope, key) DO UPDATE SET state = 'done', owner = NULL, expires_at = EXCLUDED.expires_at`;
  const release = (scope: string, keys: string, owner: string): string =>
    `INSERT INTO ${t} AS t (scope, key, state, owner, expires_at)
       SELECT (SELECT ${scope}::text), key, 'claimed', ${owner}, 'epoch' FROM unnest((SELECT ${keys}::text[])) AS i(key)
       ON CONFLICT (scope, key) DO UPDATE SET expires_at = 'epoch'
        WHERE t.state = 'claimed' AND t.owner = EXCLUDED.owner`;
  return {
    claim: named(`WITH ${claims}`),
    exchange: named(`WITH done AS (${complete('$1', '$5', '$6')}), ${claims}`),
    exchangeReleasing: named(`WITH done AS (${complete('$1', '$5', '$6')}), gone AS (${release('$1', '$7', '$3')}), ${claims}`),
    complete: named(complete('$1', '$2', '$3')),
    release: named(release('$1', '$2', '$3')),
  };
}
