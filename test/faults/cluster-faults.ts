/**
 * The cluster rows beyond a node stopped and started again (faults.ts): issue 53's node lost WITH its
 * disk. Every queue quorum (the retry config's queue type), deduplication on, Node-RED consuming
 * through node 1. The leaders of the run's queues are moved off the node Node-RED is connected to
 * (their member there removed and added again), so the node lost is the main queue's leader and not
 * the consumer's connection: what must carry the consumer through is the quorum queue's new leader, not
 * a reconnect. The node is killed (SIGKILL, as when its machine dies) and its directory deleted, then
 * replaced as an operator replaces a dead machine, by a fresh node of the same name (cluster-broker.ts
 * `replace`), while the load goes on. As a contrast, a classic queue on that node with confirmed
 * messages: what is left of it after the replacement is in the note.
 */
import { ClusterNodes } from './cluster-broker';
import * as amqp from 'amqplib';
import { pause } from './fault-broker';
import type { Fault, FaultContext, FaultWindow } from './faults';
import { withChannel, type Accounting } from './workload';

/** How long the cluster runs on two nodes before the operator replaces the lost one. */
const AWAY_MS = 5_000;

/** Confirmed persistent messages in the classic queue of the contrast. */
const CLASSIC_MESSAGES = 20;

/** Declares a classic queue on node `url` and puts CLASSIC_MESSAGES confirmed persistent messages into it. */
async function classicQueueWithMessages(url: string, queue: string): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createConfirmChannel();
    await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'classic' } });
    for (let i = 0; i < CLASSIC_MESSAGES; i += 1) channel.sendToQueue(queue, Buffer.from(String(i)), { persistent: true });
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
}

/** What became of the contrast's classic queue, asked of node `url`; the queue deleted. */
async function classicQueueAfter(url: string, queue: string): Promise<string> {
  const found = await withChannel(url, (ch) => ch.checkQueue(queue)).catch((err: unknown) => `gone: ${/with message "(.*)"/.exec(String(err))?.[1] ?? String(err)}`);
  await withChannel(url, (ch) => ch.deleteQueue(queue)).catch(() => undefined);
  return typeof found === 'string' ? found : `${found.messageCount} of its ${CLASSIC_MESSAGES} messages left`;
}

const seconds = (from: number, to: number): string => `${((to - from) / 1000).toFixed(1)} s`;

async function loseTheLeadersNode({ broker, names, note }: FaultContext): Promise<FaultWindow[]> {
  const nodes = ClusterNodes.of(broker);
  const queues = [names.mainQueue, names.retryQueue, names.parkingQueue];
  const consumer = await nodes.consumerNodeOf(names.mainQueue, 1);
  const leadersBefore: string[] = [];
  for (const queue of queues) {
    const leader = await nodes.leaderOf(queue, consumer);
    leadersBefore.push(leader === consumer ? `${leader}→${await nodes.moveLeaderOff(queue, consumer)}` : String(leader));
  }
  const lost = await nodes.leaderOf(names.mainQueue, consumer);
  const survivors = nodes.indexes.filter((i) => i !== lost);
  const classic = `${names.mainQueue}.classic`;
  await classicQueueWithMessages(nodes.url(lost), classic);
  const start = Date.now();
  await nodes.kill(lost);
  const newLeader = await nodes.leaderOf(names.mainQueue, consumer, survivors);
  const end = Date.now();
  await nodes.wipe(lost);
  await pause(AWAY_MS);
  const replacing = Date.now();
  await nodes.replace(lost);
  for (const queue of queues) await nodes.membersOnline(queue, consumer, 3);
  const leadersAfter: number[] = [];
  for (const queue of queues) leadersAfter.push(await nodes.leaderOf(queue, consumer));
  const classicAfter = await classicQueueAfter(nodes.url(consumer), classic);
  note(
    `Node-RED consuming through node ${consumer}; leaders (main, retry, parking) on node ${leadersBefore.join(', ')} (moved off node ${consumer}); ` +
      `node ${lost}, the main queue's leader, killed and its directory deleted; main queue's leader node ${newLeader} ${seconds(start, end)} after the kill; ` +
      `node ${lost} replaced by a fresh node ${seconds(start, replacing)} after it (forget_cluster_node, join_cluster, rabbitmq-queues grow: ${seconds(replacing, Date.now())}), every queue 3 members again; leaders after: node ${leadersAfter.join(', ')}; ` +
      `a classic queue on node ${lost} with ${CLASSIC_MESSAGES} confirmed messages: ${classicAfter}`,
  );
  return [{ start, end }];
}

export const CLUSTER_FAULTS: Fault[] = [
  {
    id: 'cluster-lost',
    name: "cluster node lost with its disk: the main queue's leader, replaced by a fresh node (3 nodes, all queues quorum) · deduplicated",
    broker: 'cluster',
    // The consumer's channel (on another node) stays: recovery counts from a new leader of the main queue.
    newConsumer: false,
    dedupe: true,
    parksPoison: true,
    inject: loseTheLeadersNode,
  },
];

/** What the cluster rows report beyond the columns: how processing went on from the fault's start (the longest pause, by which consumers). */
export function processingAfter(accounting: Accounting, from: number): string {
  const before = new Set(accounting.records.filter((r) => r.at < from).map((r) => r.tag));
  const after = accounting.records.filter((r) => r.at >= from).sort((a, b) => a.at - b.at);
  let longest = 0;
  let last = from;
  for (const record of after) {
    longest = Math.max(longest, record.at - last);
    last = record.at;
  }
  const tags = new Set(after.map((r) => r.tag));
  const fresh = [...tags].filter((tag) => !before.has(tag)).length;
  return `processing paused at most ${seconds(0, longest)} from the fault's start on (the longest gap between two processed messages), by ${tags.size} consumer(s), ${fresh} of them new`;
}
