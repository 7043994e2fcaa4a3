/**
 * A careful hand-written idempotent consumer, on Redis or PostgreSQL, for the dedupe section: raw
 * amqplib with ioredis or pg doing what the package's gate does, with nothing else — the claims of one
 * event-loop turn and the completes of the turns before go out as one call (a script, or one
 * statement; up to 4 in flight with Redis and 2 with PostgreSQL, as the package), a claimed delivery
 * gets the same msg as the package's (sameWorkMsg) and one setImmediate hop as a flow, its key is
 * completed, and it is acked (batched per turn, multiple) once the complete answered. Every key in the bench is new: a key not
 * claimed is acked as a duplicate. Plain bench code: what the protocol itself costs on this machine
 * without the package.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { ConsumeMessage } from 'amqplib';
import { armProbe, connect, probeCounts, probeResult, withTimeout, type RunResult } from './common';
import { batchedAcker, sameWorkMsg } from './raw-consumer.cjs';
import { timeoutFor } from './scenarios';
import { cleanStore, DATABASE_URL, REDIS_URL } from './store-scenarios';

const LEASE_MS = 20_000;
const RETENTION_MS = 3_600_000;

/** One call: records `completes` as done, claims `claims`; says which claims are this consumer's. */
type Exchange = (completes: string[], claims: string[]) => Promise<boolean[]>;

interface RawStore {
  exchange: Exchange;
  close(): Promise<void>;
}

const REDIS_EXCHANGE = `
local done = tonumber(ARGV[1])
local mine = 'c:' .. ARGV[2]
local out = {}
for i, k in ipairs(KEYS) do
  if i <= done then
    redis.call('SET', k, 'd', 'PX', ARGV[4])
  else
    local v = redis.call('GET', k)
    if not v then redis.call('SET', k, mine, 'PX', ARGV[3]) out[#out + 1] = 1
    elseif v == mine then redis.call('PEXPIRE', k, ARGV[3]) out[#out + 1] = 1
    else out[#out + 1] = 0 end
  end
end
return out`;

/** Keys shaped as the package's (`<prefix><scope>:<key>`, the queue as the scope): the same bytes for Redis to hash and store. */
function redisStore(tag: string, queue: string): RawStore {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 0 });
  redis.defineCommand('dedupeRawExchange', { lua: REDIS_EXCHANGE });
  const scripts = redis as unknown as { dedupeRawExchange(...args: Array<string | number>): Promise<number[]> };
  const prefix = `bench-${tag}:${encodeURIComponent(queue)}:`;
  return {
    exchange: async (completes, claims) => {
      const keys = [...completes, ...claims].map((k) => prefix + k);
      const answers = await scripts.dedupeRawExchange(keys.length, ...keys, completes.length, 'raw', LEASE_MS, RETENTION_MS);
      return answers.map((a) => a === 1);
    },
    close: async () => {
      redis.disconnect();
      await cleanStore('redis', tag);
    },
  };
}

/**
 * PostgreSQL: the package's table shape (one row per (scope, key), the queue as the scope, as the
 * package's: the same index entries for the server to compare and write; a lease or a retention as
 * its expiry, the expiry not indexed, so a complete can be a HOT update), one statement per call — the
 * completes upserted, the claims inserted or taken over when their lease ended, the keys this consumer
 * got returned — on a pool of 4 (2 calls in flight, as the package).
 */
async function postgresStore(tag: string, queue: string): Promise<RawStore> {
  const table = `bench_dedupe_${tag}`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  await pool.query(`CREATE TABLE ${table} (scope text NOT NULL, key text NOT NULL, state text NOT NULL, owner text, expires_at timestamptz NOT NULL, PRIMARY KEY (scope, key))`);
  const statement = {
    name: `bench_raw_exchange_${tag}`,
    text: `WITH done AS (
             INSERT INTO ${table} (scope, key, state, owner, expires_at) SELECT $5, k, 'done', NULL, now() + $2 * interval '1 millisecond' FROM unnest($1::text[]) k
             ON CONFLICT (scope, key) DO UPDATE SET state = 'done', owner = NULL, expires_at = EXCLUDED.expires_at)
           INSERT INTO ${table} AS t (scope, key, state, owner, expires_at) SELECT $5, k, 'claimed', 'raw', now() + $4 * interval '1 millisecond' FROM unnest($3::text[]) k
           ON CONFLICT (scope, key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
            WHERE t.state = 'claimed' AND (t.expires_at <= now() OR t.owner = EXCLUDED.owner)
           RETURNING key`,
  };
  return {
    exchange: async (completes, claims) => {
      const result = await pool.query<{ key: string }>({ ...statement, values: [completes, RETENTION_MS, claims, LEASE_MS, queue] });
      const mine = new Set(result.rows.map((r) => r.key));
      return claims.map((k) => mine.has(k));
    },
    close: async () => {
      await pool.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
      await pool.end();
    },
  };
}

interface Call {
  completing: ConsumeMessage[];
  claiming: ConsumeMessage[];
  mine: boolean[] | undefined;
}

/**
 * The consumer's store calls: the claims and completes of one turn go as one call, at most `maxInFlight`
 * calls at once, their answers taken in call order; a claimed message is worked on (sameWorkMsg) and
 * completed a turn later, a duplicate acked at once. `failed` rejects when a call fails.
 */
function storePipeline(store: RawStore, acker: ReturnType<typeof batchedAcker>, queue: string, maxInFlight: number): { claim: (m: ConsumeMessage) => void; failed: Promise<never> } {
  let claims: ConsumeMessage[] = [];
  let completes: ConsumeMessage[] = [];
  let inFlight = 0;
  const calls: Call[] = [];
  let scheduled = false;
  let fail: (err: Error) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  const keyOf = (m: ConsumeMessage): string => String(m.properties.messageId);
  const flush = (): void => {
    scheduled = false;
    if (inFlight >= maxInFlight || (claims.length === 0 && completes.length === 0)) return;
    const claiming = claims;
    const completing = completes;
    claims = [];
    completes = [];
    inFlight += 1;
    // Answers are taken in call order (calls on a pool may answer out of order): acks stay ascending.
    const call: Call = { completing, claiming, mine: undefined };
    calls.push(call);
    store.exchange(completing.map(keyOf), claiming.map(keyOf)).then(
      (mine) => {
        inFlight -= 1;
        call.mine = mine;
        while (calls[0]?.mine) answered(calls.shift() as Call);
        schedule();
      },
      (err: unknown) => {
        inFlight -= 1;
        fail(err instanceof Error ? err : new Error(String(err)));
      },
    );
  };
  const answered = ({ completing, claiming, mine }: Call): void => {
    for (const m of completing) acker.ack(m);
    claiming.forEach((m, i) => {
      if (!mine?.[i]) return acker.ack(m);
      const msg = sameWorkMsg(m, queue, `raw:${m.fields.deliveryTag}`);
      setImmediate(() => {
        if (msg.payload !== undefined) complete(m);
      });
    });
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  const complete = (m: ConsumeMessage): void => {
    completes.push(m);
    schedule();
  };
  const claim = (m: ConsumeMessage): void => {
    claims.push(m);
    schedule();
  };
  return { claim, failed };
}

/** Consume + ack `count` messages (every messageId new) of `queue`, deduplicating in `kind`; its keys or table are removed afterwards. */
export async function rawDedupe({ kind, queue, count, prefetch }: { kind: 'redis' | 'postgres'; queue: string; count: number; prefetch: number }): Promise<RunResult> {
  const tag = randomBytes(4).toString('hex');
  const store = kind === 'redis' ? redisStore(tag, queue) : await postgresStore(tag, queue);
  const model = await connect(`bench raw dedupe consumer (${kind})`);
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(prefetch);
    const acker = batchedAcker(ch);
    const { claim, failed } = storePipeline(store, acker, queue, kind === 'postgres' ? 2 : 4); // in flight at most: as the package's stores
    const done = armProbe(count);
    await ch.consume(
      queue,
      (m) => {
        if (m === null) return;
        acker.received();
        claim(m);
      },
      { noAck: false },
    );
    await withTimeout(Promise.race([done, failed]), timeoutFor(count), `raw dedupe consumer (${kind}): ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await model.close().catch(() => undefined);
    await store.close();
  }
}
