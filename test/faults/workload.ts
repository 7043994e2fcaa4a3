/**
 * The fault suite's workload, seen from outside Node-RED: a producer that publishes numbered messages
 * with confirms and retries each until it is confirmed (so "published" is exact), and the accounting
 * of what became of every message id.
 */
import * as amqp from 'amqplib';
import type { Channel, ChannelModel, ConfirmChannel, GetMessage } from 'amqplib';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const ignore = (): void => undefined;

/** About 5 % of the messages are poison: the flow always fails them, so they are retried and parked. */
export const isPoison = (n: number): boolean => n % 20 === 7;

/** The poison ones of these message ids (`<prefix>-<n>`). */
export const poisonIds = (ids: Iterable<string>): string[] => [...ids].filter((id) => isPoison(Number(id.slice(id.lastIndexOf('-') + 1))));

/** A confirm not seen within this time counts as failed: the message is published again (same messageId). */
const CONFIRM_TIMEOUT_MS = 15_000;

/** Starts numbered tasks (`produce(1)`, `produce(2)`, …) at a steady pace; `finish` waits for the started ones. */
export abstract class Paced {
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private n = 0;

  /** Tasks started so far. */
  get started(): number {
    return this.n;
  }

  /** Starts `perSecond` tasks a second, `limit` of them at most. */
  start(perSecond: number, limit = Infinity): void {
    this.timer = setInterval(() => {
      if (this.n >= limit) return;
      const task = this.produce((this.n += 1));
      this.pending.add(task);
      void task.finally(() => this.pending.delete(task));
    }, 1000 / perSecond);
  }

  /** Stops starting new tasks and waits until every started one is done. */
  protected async finish(): Promise<void> {
    clearInterval(this.timer);
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  protected abstract produce(n: number): Promise<void>;
}

/** Publishes `<prefix>-<n>` at a steady pace, each retried on a fresh connection until the broker confirmed it. */
export class Producer extends Paced {
  /** Ids the broker confirmed (and did not return). */
  readonly confirmed = new Set<string>();
  private channel: Promise<{ model: ChannelModel; channel: ConfirmChannel }> | undefined;
  private readonly returned = new Set<string>();

  constructor(
    private readonly urls: readonly string[],
    private readonly exchange: string,
    private readonly routingKey: string,
    protected readonly prefix: string,
    /** Which messages are poison (the downstream outage rows publish none). */
    private readonly poison: (n: number) => boolean = isPoison,
    /** Each message published a second time (same messageId, `copy: 2` in the body) this long at most (at random) after the first was confirmed. */
    private readonly secondCopyWithinMs?: number,
  ) {
    super();
  }

  /** Stops starting new messages, waits until every started one is confirmed, returns how many were published. */
  async stop(): Promise<number> {
    await this.finish();
    const open = await this.channel?.catch(() => undefined);
    await open?.model.close().catch(ignore);
    return this.confirmed.size;
  }

  protected async produce(n: number): Promise<void> {
    const id = `${this.prefix}-${n}`;
    const copy = (c: number): Buffer => Buffer.from(JSON.stringify({ n, poison: this.poison(n), copy: c }));
    await this.publishConfirmed(id, copy(1));
    this.confirmed.add(id);
    if (this.secondCopyWithinMs === undefined) return;
    await pause(Math.random() * this.secondCopyWithinMs);
    await this.publishConfirmed(id, copy(2));
  }

  /** Publishes until the broker confirmed it, on a fresh connection after a failure. */
  protected async publishConfirmed(id: string, content: Buffer, routingKey = this.routingKey): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      let channel: ConfirmChannel | undefined;
      try {
        channel = await this.open(attempt);
        await this.send(channel, id, content, routingKey);
        return;
      } catch {
        if (channel) this.drop(channel);
        await pause(200);
      }
    }
  }

  private send(channel: ConfirmChannel, id: string, content: Buffer, routingKey: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no confirm for ${id}`)), CONFIRM_TIMEOUT_MS);
      const options = { messageId: id, persistent: true, mandatory: true, contentType: 'application/json' };
      try {
        channel.publish(this.exchange, routingKey, content, options, (err: unknown) => {
          clearTimeout(timer);
          if (err) reject(err instanceof Error ? err : new Error(`publish of ${id} failed`));
          else if (this.returned.delete(id)) reject(new Error(`${id} was returned unroutable`));
          else resolve();
        });
      } catch (err) {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(`publish of ${id} failed`));
      }
    });
  }

  /** One shared confirm channel; after a failure the next attempt tries the next URL (cluster). */
  private async open(attempt: number): Promise<ConfirmChannel> {
    this.channel ??= (async () => {
      const url = this.urls[attempt % this.urls.length]!;
      const model = await amqp.connect(url);
      model.on('error', ignore);
      const channel = await model.createConfirmChannel();
      channel.on('error', ignore);
      channel.on('return', (m: { properties: { messageId?: unknown } }) => this.returned.add(String(m.properties.messageId)));
      channel.on('close', () => this.drop(channel));
      return { model, channel };
    })();
    const opening = this.channel;
    try {
      return (await opening).channel;
    } catch (err) {
      if (this.channel === opening) this.channel = undefined;
      throw err;
    }
  }

  /** Forgets a failed channel (once, whoever notices first) and closes its connection. */
  private drop(channel: ConfirmChannel): void {
    const current = this.channel;
    void current
      ?.then((open) => {
        if (open.channel !== channel || this.channel !== current) return;
        this.channel = undefined;
        void open.model.close().catch(ignore);
      })
      .catch(ignore);
  }
}

/** Runs `work` on a channel of a short-lived connection (the fault broker comes and goes). */
export async function withChannel<T>(url: string, work: (channel: Channel) => Promise<T>): Promise<T> {
  const connection = await amqp.connect(url);
  connection.on('error', ignore);
  try {
    const channel = await connection.createChannel();
    channel.on('error', ignore);
    return await work(channel);
  } finally {
    await connection.close().catch(ignore);
  }
}

/** Every message now ready in a queue, taken off it; none when the queue does not exist. */
export async function drain(url: string, queue: string): Promise<GetMessage[]> {
  return withChannel(url, async (channel) => {
    const out: GetMessage[] = [];
    try {
      await channel.checkQueue(queue);
    } catch {
      return out;
    }
    for (;;) {
      const m = await channel.get(queue, { noAck: true });
      if (m === false) return out;
      out.push(m);
    }
  });
}

/** What the flow records for each processed message (a confirmed publish before its ack). */
export interface ProcessedRecord {
  id: string;
  /** Date.now() in Node-RED when the flow processed it. */
  at: number;
  /** The consumer tag it was delivered on: a new one means a new consumer (reconnect, redeploy, restart). */
  tag: string;
}

/** What became of the messages of one run, accumulated over several drains. */
export class Accounting {
  readonly records: ProcessedRecord[] = [];
  readonly processed = new Set<string>();
  readonly parked = new Set<string>();
  /** Ids whose effect is in the effects table: processed, even when the record publish after it was cut off. */
  readonly effected = new Set<string>();
  parkedCopies = 0;

  addEffects(ids: string[]): void {
    for (const id of ids) this.effected.add(id);
  }

  /** Distinct ids processed: recorded, or with their effect written. */
  get processedCount(): number {
    let n = this.processed.size;
    for (const id of this.effected) if (!this.processed.has(id)) n += 1;
    return n;
  }

  addRecords(messages: GetMessage[]): void {
    for (const m of messages) {
      // A flow in batch mode records a batch's items as one array.
      const parsed = JSON.parse(m.content.toString()) as ProcessedRecord | ProcessedRecord[];
      for (const record of Array.isArray(parsed) ? parsed : [parsed]) {
        this.records.push(record);
        this.processed.add(record.id);
      }
    }
  }

  addParked(messages: GetMessage[]): void {
    for (const m of messages) {
      this.parkedCopies += 1;
      this.parked.add(String(m.properties.messageId));
    }
  }

  /** Published ids neither processed nor parked (yet). */
  missing(published: ReadonlySet<string>): string[] {
    return [...published].filter((id) => !this.processed.has(id) && !this.effected.has(id) && !this.parked.has(id));
  }

  /** Published ids without their effect and not parked (yet). */
  missingEffects(published: ReadonlySet<string>): string[] {
    return [...published].filter((id) => !this.effected.has(id) && !this.parked.has(id));
  }

  get duplicates(): number {
    return this.records.length - this.processed.size + (this.parkedCopies - this.parked.size);
  }

  /**
   * Seconds from the end of a fault to the first message processed after it — by a consumer that did
   * not exist before the fault began, when the fault replaces consumers. undefined: none.
   */
  recovery(fault: { start: number; end: number }, newConsumer: boolean): number | undefined {
    const before = new Set(this.records.filter((r) => r.at < fault.start).map((r) => r.tag));
    const after = this.records.filter((r) => r.at >= fault.end && !(newConsumer && before.has(r.tag)));
    if (after.length === 0) return undefined;
    return (Math.min(...after.map((r) => r.at)) - fault.end) / 1000;
  }
}
