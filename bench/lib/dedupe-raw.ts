/**
 * The best hand-written idempotent consumer on Redis, for the dedupe section: raw amqplib and ioredis
 * doing what the package's gate does, with nothing else — the claims of one event-loop turn and the
 * completes of the turns before go out as one script call (up to 4 in flight, as the package), a
 * claimed delivery gets the same msg as the package's (sameWorkMsg) and one setImmediate hop as a
 * flow, its key is completed, and it is acked (batched per turn, multiple) once the complete answered.
 * Plain bench code: what the protocol itself costs on this machine, the package's ceiling.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { ConsumeMessage } from 'amqplib';
import { armProbe, connect, probeCounts, probeResult, withTimeout, type RunResult } from './common';
import { batchedAcker, sameWorkMsg } from './raw-consumer.cjs';
import { timeoutFor } from './scenarios';
import { cleanStore, REDIS_URL } from './store-scenarios';

const EXCHANGE = `
local done = tonumber(ARGV[1])
local mine = 'c:' .. ARGV[2]
local out = {}
for i, k in ipairs(KEYS) do
  if i <= done then
    redis.call('SET', k, 'd', 'PX', ARGV[4])
  else
    local v = redis.call('GET', k)
    if not v then redis.call('SET', k, mine, 'PX', ARGV[3]) out[#out + 1] = 'c'
    elseif v == 'd' then out[#out + 1] = 'd'
    else out[#out + 1] = 'h' end
  end
end
return out`;

interface Exchanging {
  dedupeRawExchange(...args: Array<string | number>): Promise<string[]>;
}

/** Consume + ack `count` messages (every messageId new) of `queue`; its keys are removed afterwards. */
export async function rawDedupeRedis({ queue, count, prefetch }: { queue: string; count: number; prefetch: number }): Promise<RunResult> {
  const tag = randomBytes(4).toString('hex');
  const prefix = `bench-${tag}:`;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 0 });
  redis.defineCommand('dedupeRawExchange', { lua: EXCHANGE });
  const scripts = redis as unknown as Exchanging;
  const model = await connect('bench raw dedupe consumer');
  try {
    const ch = await model.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(prefetch);
    const acker = batchedAcker(ch);
    let claims: ConsumeMessage[] = [];
    let completes: ConsumeMessage[] = [];
    let inFlight = 0;
    let scheduled = false;
    let fail: (err: Error) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => {
      fail = reject;
    });
    const flush = (): void => {
      scheduled = false;
      if (inFlight >= 4 || (claims.length === 0 && completes.length === 0)) return;
      const claiming = claims;
      const completing = completes;
      claims = [];
      completes = [];
      const keys = [...completing, ...claiming].map((m) => `${prefix}${String(m.properties.messageId)}`);
      inFlight += 1;
      scripts.dedupeRawExchange(keys.length, ...keys, completing.length, 'raw', 20_000, 3_600_000).then(
        (answers) => {
          inFlight -= 1;
          for (const m of completing) acker.ack(m);
          claiming.forEach((m, i) => {
            if (answers[i] !== 'c') return acker.ack(m);
            const msg = sameWorkMsg(m, queue, `raw:${m.fields.deliveryTag}`);
            setImmediate(() => {
              if (msg.payload !== undefined) complete(m);
            });
          });
          schedule();
        },
        (err: unknown) => {
          inFlight -= 1;
          fail(err instanceof Error ? err : new Error(String(err)));
        },
      );
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
    const done = armProbe(count);
    await ch.consume(
      queue,
      (m) => {
        if (m === null) return;
        acker.received();
        claims.push(m);
        schedule();
      },
      { noAck: false },
    );
    await withTimeout(Promise.race([done, failed]), timeoutFor(count), `raw dedupe consumer: ${count} acks (got ${probeCounts().acks})`);
    return probeResult();
  } finally {
    await model.close().catch(() => undefined);
    redis.disconnect();
    await cleanStore('redis', tag);
  }
}
