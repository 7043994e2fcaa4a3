/**
 * The outbox rows' producer (split from workload.ts, which holds the publisher and the accounting).
 */
import { pause } from './fault-broker';
import { isPoison, Paced } from './workload';

/**
 * The outbox rows' producer: writes numbered events into the outbox table, each in a transaction of
 * its own, retried until it commits (so "committed" is exact), and every tenth on purpose rolled back
 * (its event must never be processed). The relay in the flow publishes them.
 */
export class OutboxProducer extends Paced {
  /** Ids of events whose transaction committed. */
  readonly confirmed = new Set<string>();
  /** Ids of events written and rolled back on purpose. */
  readonly rolledBack = new Set<string>();

  constructor(
    private readonly db: { transaction<T>(work: (client: { query(sql: string, params?: unknown[]): Promise<unknown> }) => Promise<T>): Promise<T> },
    private readonly table: string,
    private readonly exchange: string,
    private readonly routingKey: string,
    private readonly prefix: string,
    private readonly poison: (n: number) => boolean = isPoison,
  ) {
    super();
  }

  async stop(): Promise<number> {
    await this.finish();
    return this.confirmed.size;
  }

  protected async produce(n: number): Promise<void> {
    const id = `${this.prefix}-${n}`;
    const rollBack = n % 10 === 3;
    const content = Buffer.from(JSON.stringify({ n, poison: this.poison(n), copy: 1 }));
    for (;;) {
      try {
        await this.db.transaction(async (client) => {
          await client.query(
            `INSERT INTO ${this.table} (id, exchange, routing_key, payload, properties) VALUES ($1, $2, $3, $4, '{"contentType":"application/json","persistent":true}')`,
            [id, this.exchange, this.routingKey, content],
          );
          await client.query('SELECT pg_notify($1, $2)', [`${this.table}_outbox`, id]);
          if (rollBack) throw new RolledBack();
        });
        this.confirmed.add(id);
        return;
      } catch (err) {
        if (err instanceof RolledBack) {
          this.rolledBack.add(id);
          return;
        }
        // Committed, but the answer was lost with the connection: it is there.
        if ((err as { code?: unknown }).code === '23505') {
          this.confirmed.add(id);
          return;
        }
        // The database is away (a restart): write it again.
        await pause(200);
      }
    }
  }
}

class RolledBack extends Error {}
