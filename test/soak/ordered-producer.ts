/**
 * The soak's ordered stream: messages `<key>/<n>` numbered per key, published to the partition exchange
 * with the routing key the package computes (FNV-1a of the key mod the partitions). The next message of a
 * key is published only once the one before it is confirmed, so the broker holds them in order per key.
 */
import { partitionOf } from '../../src/lib/topology/partitions';
import { Producer } from '../faults/workload';

export class OrderedProducer extends Producer {
  /** Per key, the last message started: the next waits for it. */
  private readonly tails = new Map<string, Promise<void>>();

  constructor(
    urls: readonly string[],
    exchange: string,
    prefix: string,
    private readonly keys: number,
    private readonly partitions: number,
  ) {
    super(urls, exchange, '', prefix, () => false);
  }

  protected override produce(n: number): Promise<void> {
    const key = `${this.prefix}-${(n - 1) % this.keys}`;
    const seq = Math.floor((n - 1) / this.keys) + 1;
    const id = `${key}/${seq}`;
    const before = this.tails.get(key) ?? Promise.resolve();
    const task = before.then(async () => {
      await this.publishConfirmed(id, Buffer.from(JSON.stringify({ key, n: seq })), String(partitionOf(key, this.partitions)));
      this.confirmed.add(id);
    });
    this.tails.set(key, task);
    return task;
  }
}
