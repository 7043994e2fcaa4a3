// @ts-check
'use strict';
/**
 * The bench's raw amqplib consumer (manual ack), one implementation for both of its uses:
 *
 * - scenarios.ts's rawConsume runs `rawHandler` in the bench process;
 * - the peers section runs this file as a process of its own, the way a small hand-written service
 *   runs: `node --require probe.cjs raw-consumer.cjs <queue> <prefetch> [none|parse|msg|msg-later]`
 *   (AMQP_URL from the environment). It consumes until it is stopped.
 *
 * Plain CommonJS, so that process runs without tsx.
 */

/** @typedef {import('amqplib').ConsumeMessage} ConsumeMessage */
/** @typedef {'none' | 'parse' | 'msg' | 'msg-later' | 'msg-later-batched'} Work */

const WORKS = ['none', 'parse', 'msg', 'msg-later', 'msg-later-batched'];
const PROPERTY_KEYS = /** @type {const} */ (['contentType', 'contentEncoding', 'deliveryMode', 'priority', 'correlationId', 'replyTo', 'expiration', 'messageId', 'timestamp', 'type', 'userId', 'appId', 'clusterId']);

/**
 * What a hand-written amqplib consumer does to give a flow the same msg as retry-consumer: decode
 * the JSON body, copy the fields and defined properties, the headers, and read the attempt from the
 * (main queue, rejected) x-death entry. Plain bench code, not the package's.
 * @param {ConsumeMessage} m
 * @param {string} queue
 * @param {string} deliveryId
 */
function sameWorkMsg(m, queue, deliveryId) {
  const p = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (m.properties));
  /** @type {Record<string, unknown>} */
  const properties = {};
  for (const k of PROPERTY_KEYS) if (p[k] !== undefined) properties[k] = p[k];
  /** @type {Record<string, unknown>} */
  const headers = Object.assign({}, m.properties.headers);
  const deaths = Array.isArray(headers['x-death']) ? /** @type {Array<Record<string, unknown>>} */ (headers['x-death']) : [];
  const rejected = deaths.find((d) => d.queue === queue && d.reason === 'rejected');
  const attempt = (rejected ? Number(rejected.count) : 0) + 1;
  return {
    payload: /** @type {unknown} */ (JSON.parse(m.content.toString('utf8'))),
    amqp: { deliveryId, queue, exchange: m.fields.exchange, routingKey: m.fields.routingKey, redelivered: m.fields.redelivered, deliveryTag: m.fields.deliveryTag, consumerTag: m.fields.consumerTag, properties, headers },
    retry: { attempt, maxAttempts: 3, remaining: Math.max(0, 3 - attempt), firstDeathReason: /** @type {string | undefined} */ (headers['x-first-death-reason']) ?? null, deaths },
  };
}

/**
 * Acks the way the package batches them (src/lib/settle AckBatcher): the acks of one event-loop turn
 * go out after it as one `multiple` ack up to the highest tag — at once when nothing else is unacked.
 * Everything this consumer receives is acked in order, so a multiple ack never covers a message still
 * held. Plain bench code: a careful hand-written consumer that batches its acks.
 * @param {{ ack(message: ConsumeMessage, allUpTo?: boolean): void }} ch
 */
function batchedAcker(ch) {
  /** @type {ConsumeMessage | null} */
  let highest = null;
  let scheduled = false;
  let unacked = 0;
  const flush = () => {
    scheduled = false;
    const m = highest;
    highest = null;
    if (m) ch.ack(m, true);
  };
  return {
    received() {
      unacked += 1;
    },
    /** @param {ConsumeMessage} m */
    ack(m) {
      unacked -= 1;
      if (!highest || m.fields.deliveryTag > highest.fields.deliveryTag) highest = m;
      if (unacked === 0) return flush();
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
  };
}

/**
 * Settles a mix of acks and dead-letter nacks the way the package's AckBatcher does: the settles of
 * one event-loop turn go out after it, in tag order, one frame with `multiple` per run of the same
 * kind. Everything is settled in delivery order, so a multiple settle never covers a message still
 * held. Plain bench code: a careful hand-written retry consumer.
 * @param {{ ack(message: ConsumeMessage, allUpTo?: boolean): void, nack(message: ConsumeMessage, allUpTo?: boolean, requeue?: boolean): void }} ch
 */
function batchedSettler(ch) {
  /** @type {Array<{ m: ConsumeMessage, kind: 'ack' | 'nack' }>} */
  const pending = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const list = pending.splice(0).sort((a, b) => a.m.fields.deliveryTag - b.m.fields.deliveryTag);
    // Runs of the same kind: each settled by its last message, with `multiple` when it has more than one.
    /** @type {{ m: ConsumeMessage, kind: 'ack' | 'nack', n: number } | undefined} */
    let run;
    const close = () => {
      if (!run) return;
      if (run.kind === 'ack') ch.ack(run.m, run.n > 1);
      else ch.nack(run.m, run.n > 1, false);
    };
    for (const p of list) {
      if (run && run.kind === p.kind) {
        run.m = p.m;
        run.n += 1;
      } else {
        close();
        run = { m: p.m, kind: p.kind, n: 1 };
      }
    }
    close();
  };
  return {
    /**
     * @param {ConsumeMessage} m
     * @param {'ack' | 'nack'} kind nack: dead-letter (requeue false)
     */
    settle(m, kind) {
      pending.push({ m, kind });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
  };
}

/**
 * The consume callback. `work`: 'none' acks at once; 'parse' JSON.parse's the body first; 'msg'
 * builds the whole msg (sameWorkMsg); 'msg-later' builds it and acks one setImmediate later,
 * keeping the msg alive until then, as a flow does between the consumer and its settle node;
 * 'msg-later-batched' does the same and batches its acks as the package does (batchedAcker).
 * @param {{ ack(message: ConsumeMessage, allUpTo?: boolean): void }} ch
 * @param {string} queue
 * @param {Work} work
 * @returns {(m: ConsumeMessage | null) => void}
 */
function rawHandler(ch, queue, work) {
  const batch = work === 'msg-later-batched' ? batchedAcker(ch) : undefined;
  return (m) => {
    if (m === null) return;
    if (batch) {
      batch.received();
      const msg = sameWorkMsg(m, queue, `raw:${m.fields.deliveryTag}`);
      setImmediate(() => {
        if (msg.payload !== undefined) batch.ack(m);
      });
      return;
    }
    // The results are dropped, as by a flow that acks at once: V8 still does the parse and the copies.
    if (work === 'parse') JSON.parse(m.content.toString('utf8'));
    else if (work === 'msg') sameWorkMsg(m, queue, `raw:${m.fields.deliveryTag}`);
    else if (work === 'msg-later') {
      const msg = sameWorkMsg(m, queue, `raw:${m.fields.deliveryTag}`);
      setImmediate(() => {
        if (msg.payload !== undefined) ch.ack(m);
      });
      return;
    }
    ch.ack(m);
  };
}

/**
 * @param {string | undefined} work
 * @returns {work is Work}
 */
const isWork = (work) => work !== undefined && WORKS.includes(work);

/** The process: consume until SIGTERM; any broker error ends it with exit code 1. */
async function main() {
  const [queue, prefetch, work = 'none'] = process.argv.slice(2);
  if (!queue || !(Number(prefetch) > 0) || !isWork(work)) throw new Error(`usage: raw-consumer.cjs <queue> <prefetch> [${WORKS.join('|')}]`);
  const amqp = require('amqplib');
  const model = await amqp.connect(process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672', { clientProperties: { connection_name: 'bench raw consumer process' } });
  let stopping = false;
  model.on('close', () => {
    if (stopping) return;
    process.stderr.write('raw consumer: the connection closed\n');
    process.exit(1);
  });
  process.once('SIGTERM', () => {
    stopping = true;
    model.close().finally(() => process.exit(0));
  });
  const ch = await model.createChannel();
  ch.on('close', () => {
    if (stopping) return;
    process.stderr.write('raw consumer: the channel closed\n');
    process.exit(1);
  });
  await ch.prefetch(Number(prefetch));
  await ch.consume(queue, rawHandler(ch, queue, work), { noAck: false });
}

if (require.main === module) {
  main().catch((/** @type {unknown} */ err) => {
    process.stderr.write(`raw consumer: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}

module.exports = { sameWorkMsg, rawHandler, batchedAcker, batchedSettler };
