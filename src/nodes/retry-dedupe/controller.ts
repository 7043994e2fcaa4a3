/**
 * A retry-dedupe node at work: the store of processed message keys that a consumer with deduplication
 * claims, completes and releases keys in (store.ts builds it). Its users are the consumers; it closes
 * the store once they are done, then lets its PostgreSQL node go. A Redis store says at its first start
 * what the server keeps on disk: in the log, and on its consumers' statuses when it keeps nothing
 * (every processed key is forgotten on a restart).
 */
import { redisKeeps, type RedisPersistence } from '../../lib/dedupe';
import type { DedupeStoreNode } from '../shared/dedupe-node';
import { translator, type Translate } from '../shared/i18n';
import type { NodeAPI } from '../shared/node-red';
import type { DedupeProperties } from './properties';
import { ConfigUsers, type ConfigUser } from '../shared/users';
import { dedupeStore, type StoreChoice } from './store';

const HOUR = 3_600_000;

export class DedupeController {
  private readonly users = new ConfigUsers();
  private readonly chosen: StoreChoice;
  /** This node as a user of its PostgreSQL node. */
  private readonly asUser: ConfigUser;
  private readonly t: Translate;

  constructor(
    RED: NodeAPI,
    private readonly node: DedupeStoreNode,
    props: DedupeProperties,
  ) {
    this.t = translator(RED);
    node.forgetsOnRestart = false;
    const problems = [...props.problems];
    node.retentionMs = props.numbers.retentionHours * HOUR;
    node.leaseMs = props.numbers.leaseSeconds * 1000;
    this.chosen = dedupeStore(RED, node, props, problems, (store, found) => this.persistence(store, found));
    node.problems = problems;
    node.store = problems.length === 0 ? this.chosen.store : undefined;
    if (problems.length > 0) node.error(`deduplication store not usable: ${problems.join('; ')}`);
    this.asUser = { id: node.id, status: () => undefined };
    this.chosen.database?.register(this.asUser);
    node.register = (user) => this.users.add(user);
    node.deregister = (user) => {
      this.users.remove(user);
      return Promise.resolve();
    };
  }

  /** Consumers still draining record or release their keys here: closes once they are done. */
  async close(): Promise<void> {
    await this.users.whenUnused();
    await this.chosen.store?.close();
    this.chosen.database?.deregister(this.asUser);
  }

  /** What the Redis server keeps on disk: in the log; on the consumers' statuses when nothing. */
  private persistence(store: string, found: RedisPersistence): void {
    const keeps = redisKeeps(found);
    const text = this.t(`retry-dedupe.persistence.${keeps}`, { store, save: found.save ?? '', fsync: found.appendfsync ?? '?' });
    if (keeps === 'aof') this.node.log(text);
    else this.node.warn(text);
    this.node.forgetsOnRestart = keeps === 'nothing';
    // Its users (consumers) show their status again, with this fact.
    this.users.broadcast({});
  }
}
