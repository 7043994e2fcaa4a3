/** The instances of a partitioned configuration meet through the broker: shares, goodbyes, the killed ones, and no channel. */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ConsumeMessage } from 'amqplib';
import { MEMBERS_EXCHANGE, PartitionMembers, membersRoutingKey } from '../../../src/lib/consume/members';
import type { SessionConnection } from '../../../src/lib/consume';

/** A broker of one direct exchange: what is published with a key reaches every queue bound with it. */
class FakeBroker {
  readonly bindings = new Map<string, Set<string>>();
  readonly consumers = new Map<string, (m: ConsumeMessage | null) => void>();
  readonly channels: EventEmitter[] = [];
  refuse = false;
  private queues = 0;

  connection(): SessionConnection & { kill(): void } {
    const events = new EventEmitter();
    const mine: string[] = [];
    let killed = false;
    return {
      connection: {},
      on: (event: string, f: () => void) => events.on(event, f),
      off: (event: string, f: () => void) => events.off(event, f),
      withThrowawayChannel: (() => Promise.reject(new Error('unused'))),
      kill: () => {
        killed = true; // what it publishes from now on reaches nobody
        for (const q of mine) this.consumers.delete(q);
      },
      createChannel: () => {
        if (this.refuse) return Promise.reject(new Error('ACCESS_REFUSED'));
        const channel = Object.assign(new EventEmitter(), {
          assertQueue: () => {
            const queue = `amq.gen-${this.queues++}`;
            mine.push(queue);
            return Promise.resolve({ queue });
          },
          bindQueue: (queue: string, exchange: string, key: string) => {
            assert.equal(exchange, MEMBERS_EXCHANGE);
            this.bindings.set(key, (this.bindings.get(key) ?? new Set()).add(queue));
            return Promise.resolve();
          },
          consume: (queue: string, f: (m: ConsumeMessage | null) => void) => {
            this.consumers.set(queue, f);
            return Promise.resolve({ consumerTag: queue });
          },
          publish: (_exchange: string, key: string, content: Buffer) => {
            if (killed) return true;
            for (const q of this.bindings.get(key) ?? []) setImmediate(() => this.consumers.get(q)?.({ content } as ConsumeMessage));
            return true;
          },
          close: () => {
            for (const q of mine) this.consumers.delete(q);
            return Promise.resolve();
          },
        });
        this.channels.push(channel);
        return Promise.resolve(channel as never);
      },
    };
  }
}

/** An instance and the shares it announced. */
function member(broker: FakeBroker, id: string, partitions = 6): { members: PartitionMembers; shares: number[][]; conn: ReturnType<FakeBroker['connection']> } {
  const conn = broker.connection();
  const members = new PartitionMembers({ connection: conn, mainQueue: 'orders', partitions, id, heartbeatMs: 20, settleMs: 30, expireMs: 1000 });
  const shares: number[][] = [];
  members.on('share', (owned) => shares.push(owned));
  members.start();
  return { members, shares, conn };
}

/** Polls for up to about 10 s: the machine may be busy (CI runs this beside brokers). */
const until = async (check: () => boolean, what: string): Promise<void> => {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), what);
};
const last = (shares: number[][]): string => (shares.at(-1) ?? []).join(',');

describe('PartitionMembers', () => {
  it('meet on amq.direct under the main queue’s key and share evenly; a goodbye and a killed one give their partitions to the others', async () => {
    const broker = new FakeBroker();
    const [a, b, c] = ['a', 'b', 'c'].map((id) => member(broker, id));
    await until(() => [a, b, c].every((m) => m!.shares.at(-1)?.length === 2), 'two each');
    assert.equal(new Set([a, b, c].flatMap((m) => m!.shares.at(-1)!)).size, 6);
    assert.ok(broker.bindings.has(membersRoutingKey('orders')));
    await c!.members.stop(); // goodbye
    await until(() => a!.shares.at(-1)?.length === 3 && b!.shares.at(-1)?.length === 3, 'three each after the goodbye');
    b!.conn.kill(); // SIGKILL: no goodbye, no more heartbeats
    await b!.members.stop();
    await until(() => last(a!.shares) === '0,1,2,3,4,5', 'every partition to the last one');
    await a!.members.stop();
  });

  it('a paused one holds nothing and says goodbye; resumed, it gets its share back', async () => {
    const broker = new FakeBroker();
    const [a, b] = ['a', 'b'].map((id) => member(broker, id, 4));
    await until(() => a!.shares.at(-1)?.length === 2 && b!.shares.at(-1)?.length === 2, 'two each');
    a!.members.setAway(true);
    await until(() => last(a!.shares) === '' && last(b!.shares) === '0,1,2,3', 'all to b');
    a!.members.setAway(false);
    await until(() => a!.shares.at(-1)?.length === 2 && b!.shares.at(-1)?.length === 2, 'two each again');
    await Promise.all([a!.members.stop(), b!.members.stop()]);
  });

  it('without its channel (the broker refuses it) every partition is consumed here, with a warning', async () => {
    const broker = new FakeBroker();
    broker.refuse = true;
    const conn = broker.connection();
    const members = new PartitionMembers({ connection: conn, mainQueue: 'orders', partitions: 3, id: 'a' });
    const warnings: string[] = [];
    const shares: number[][] = [];
    members.on('warning', (w) => warnings.push(w)).on('share', (owned) => shares.push(owned));
    members.start();
    await until(() => shares.length === 1, 'a share');
    assert.deepEqual(shares, [[0, 1, 2]]);
    assert.match(warnings[0] ?? '', /ACCESS_REFUSED/);
    await members.stop();
  });

  it('a channel closed under it (the connection up) joins again: no warning, the others still share with it', async () => {
    const broker = new FakeBroker();
    const [a, b] = ['a', 'b'].map((id) => member(broker, id, 4));
    await until(() => a!.shares.at(-1)?.length === 2 && b!.shares.at(-1)?.length === 2, 'two each');
    const warnings: string[] = [];
    a!.members.on('warning', (w) => warnings.push(w));
    broker.channels[0]!.emit('close');
    const [seenA, seenB] = [a!.shares.length, b!.shares.length];
    await until(() => broker.channels.length === 3, 'a new channel');
    // Ten heartbeats after it joined again: neither announced any other share since the close.
    await new Promise((r) => setTimeout(r, 200));
    assert.ok([...a!.shares.slice(seenA), ...b!.shares.slice(seenB)].every((owned) => owned.length === 2));
    assert.equal(a!.shares.at(-1)?.length, 2);
    assert.equal(b!.shares.at(-1)?.length, 2);
    assert.deepEqual(warnings, []);
    await Promise.all([a!.members.stop(), b!.members.stop()]);
  });
});
