/**
 * The fault suite's 3-node cluster (scripts/rabbitmq-cluster.sh) node by node: each node's rabbitmqctl,
 * rabbitmq-queues and management API, where a quorum queue's leader and consumers are, moving a leader
 * off a node, and what an operator does with a node lost with its disk: replace it with a fresh one.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { managementFetch } from '../helpers/broker';
import { script } from '../helpers/private-broker';
import { acceptingConnections, waitUntil, type BrokerNode } from './fault-broker';

/** What the management API says of a quorum queue (GET /api/queues/<vhost>/<name>). */
export interface QuorumQueueInfo {
  /** The node of its leader (absent or null during an election). */
  leader?: string | null;
  members?: string[];
  online?: string[];
  consumer_details?: Array<{ channel_details?: { node?: string } }>;
}

/** Where scripts/rabbitmq-node.sh keeps its nodes' directories. */
const NODES_DIR = process.env.RABBITMQ_NODES_DIR ?? '/tmp/rabbitmq-nodes';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export class ClusterNodes {
  readonly indexes = [1, 2, 3] as const;

  constructor(
    private readonly name: string,
    private readonly firstPort: number,
  ) {}

  /** The cluster of a broker of kind `cluster` (fault-broker.ts). */
  static of(broker: BrokerNode): ClusterNodes {
    if (!broker.cluster) throw new Error('not the fault suite\'s cluster');
    return new ClusterNodes(broker.cluster.name, broker.cluster.firstPort);
  }

  private node(i: number): string {
    return `${this.name}-${i}`;
  }

  nodename(i: number): string {
    return `rmq-${this.node(i)}@localhost`;
  }

  /** Node i of a node name (`rmq-<cluster>-<i>@localhost`), or undefined. */
  indexOf(nodename: string | null | undefined): number | undefined {
    return this.indexes.find((i) => this.nodename(i) === nodename);
  }

  private port(i: number): number {
    return this.firstPort + i - 1;
  }

  url(i: number): string {
    return `amqp://guest:guest@127.0.0.1:${this.port(i)}`;
  }

  ctl(i: number, ...args: string[]): Promise<string> {
    return script('rabbitmq-node.sh', ['ctl', this.node(i), ...args]);
  }

  queues(i: number, ...args: string[]): Promise<string> {
    return script('rabbitmq-node.sh', ['queues', this.node(i), ...args]);
  }

  /** A quorum queue of the default vhost, as node i's management API sees it. */
  async queue(i: number, queue: string): Promise<QuorumQueueInfo> {
    const response = await managementFetch(`queues/%2F/${encodeURIComponent(queue)}`, {}, `http://127.0.0.1:${this.port(i) + 10_000}`);
    if (!response.ok) throw new Error(`management GET queue ${queue} on node ${i}: ${response.status}`);
    return (await response.json()) as QuorumQueueInfo;
  }

  /** The node of the queue's leader, once node `asking` knows one among `among` (default: any). */
  async leaderOf(queue: string, asking: number, among: readonly number[] = this.indexes): Promise<number> {
    let leader: number | undefined;
    await waitUntil(async () => {
      leader = this.indexOf((await this.queue(asking, queue)).leader);
      return leader !== undefined && among.includes(leader);
    }, `a leader of ${queue} on node ${among.join(' or ')}`);
    return leader!;
  }

  /** The node whose channel consumes the queue (the management API's consumer list lags its stats interval, 5 s). */
  async consumerNodeOf(queue: string, asking: number): Promise<number> {
    let node: number | undefined;
    await waitUntil(async () => {
      node = this.indexOf((await this.queue(asking, queue)).consumer_details?.[0]?.channel_details?.node);
      return node !== undefined;
    }, `a consumer of ${queue} in the management API`);
    return node!;
  }

  /** Moves the queue's leader off node i: its member there removed (a leader elected among the others), then added again as a follower. */
  async moveLeaderOff(queue: string, i: number): Promise<number> {
    const other = this.indexes.find((n) => n !== i)!;
    const others = this.indexes.filter((n) => n !== i);
    await this.queues(other, 'delete_member', queue, this.nodename(i));
    const leader = await this.leaderOf(queue, other, others);
    await this.queues(other, 'add_member', queue, this.nodename(i));
    await this.membersOnline(queue, other, 3);
    return leader;
  }

  /** Resolves once node `asking` sees `count` members of the queue, all online. */
  async membersOnline(queue: string, asking: number, count: number): Promise<void> {
    await waitUntil(async () => {
      const info = await this.queue(asking, queue);
      return info.members?.length === count && info.online?.length === count;
    }, `${count} members of ${queue} online`);
  }

  /** Node i gone as when its machine dies: its Erlang VM killed (SIGKILL: no goodbye to the others, no leadership handed over). */
  async kill(i: number): Promise<void> {
    const pid = Number(readFileSync(path.join(NODES_DIR, this.node(i), 'pid'), 'utf8').trim());
    process.kill(pid, 'SIGKILL');
    await waitUntil(() => Promise.resolve(!alive(pid)), `node ${i}'s Erlang VM (${pid}) to die`);
  }

  /** Deletes node i's whole directory (data, config, logs): its disk is lost too. */
  async wipe(i: number): Promise<void> {
    await script('rabbitmq-node.sh', ['reset', this.node(i)]);
  }

  /**
   * What an operator does with a node lost with its disk: a survivor forgets it (which also removes it
   * from every quorum queue's members), a fresh node of the same name starts and joins the cluster, and
   * `rabbitmq-queues grow` adds it back as a member of every quorum queue.
   */
  async replace(i: number): Promise<void> {
    const survivor = this.indexes.find((n) => n !== i)!;
    await this.ctl(survivor, 'forget_cluster_node', this.nodename(i));
    await script('rabbitmq-node.sh', ['start', this.node(i), String(this.port(i)), String(this.port(i) + 10_000)]);
    for (const step of [['stop_app'], ['join_cluster', this.nodename(survivor)], ['start_app'], ['await_startup']]) await this.ctl(i, ...step);
    await this.queues(survivor, 'grow', this.nodename(i), 'all');
    await acceptingConnections(this.url(i));
  }
}
