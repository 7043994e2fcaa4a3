/**
 * The retry-consumer node's controller: runs its consumer sessions (one, or one per partition queue,
 * each a {@link ConsumerPart}), keeps the node's status line over them, takes the `pause` / `resume`
 * control msgs, and on close stops them with a drain. Its listeners (the publish buffer, the broker's
 * and the store's users) are removed on close.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ConsumerSession, PartitionMembers } from '../../lib/consume';
import { isPartitioned, partitionTopology, type RetryTopologyConfig } from '../../lib/topology';
import type { ConfigUser } from '../shared/users';
import type { Translate } from '../shared/i18n';
import { metrics } from '../shared/metrics';
import { downstreamRunning, type DoneFunction, type NodeAPI, type NodeMessage } from '../shared/node-red';
import type { RetryConsumerNode } from '../shared/retry-config-node';
import { StatusUpdates } from '../shared/status';
import { startPart, type ConsumerPart } from './consumer-part';
import { hasChannel, sessionStatus, type StatusContext } from './consumer-status';
import { MsgIds } from './msg-ids';
import { toMsg } from './delivered-msg';
import { partitionsStatus } from './partition-status';
import { sessionOptions, type ConsumerSettings } from './settings';

/**
 * How long a stopping consumer lets the flow settle the messages it holds before closing its channel
 * (Node-RED waits 15 s for a node to close).
 */
const DRAIN_MS = 10_000;

export class RetryConsumerController {
  private readonly parts: ConsumerPart[] = [];
  private readonly status: StatusUpdates;
  private readonly recorder: ReturnType<typeof metrics.consumer>;
  private readonly partitioned: boolean;
  /** While the kill switch is open its status counts down to the probe. */
  private readonly countdown: NodeJS.Timeout | undefined;
  private readonly onBufferChange = (): void => this.status.soon();
  /** The broker pushes connection states; while consuming (or paused), the session's own status wins. */
  private readonly user: ConfigUser;
  /** The store's connection is open while a consumer uses it (its status follows the session's). */
  private readonly storeUser: ConfigUser;
  /** The `_msgid` of each msg it sends (one generator per consumer: cheaper than Node-RED's per message). */
  private readonly msgIds = new MsgIds();
  private closing = false;
  /** Partitioned: the instances of the configuration, and the partitions this one holds among them (none until it knows the others). */
  private readonly members: PartitionMembers | undefined;
  private owned = new Set<number>();

  constructor(
    private readonly RED: NodeAPI,
    private readonly node: RetryConsumerNode,
    private readonly settings: ConsumerSettings,
    private readonly t: Translate,
  ) {
    const { config, def, dedupeNode } = settings;
    const { broker, topology } = config;
    // Its settles are counted for Prometheus (by main queue, or partition queue) and in its own 24 h history (by consumer).
    this.recorder = metrics.consumer({ consumer: node.id, config: config.id, queue: topology.mainQueue });
    // A partitioned configuration: one ordered session per partition queue.
    this.partitioned = isPartitioned(topology);
    this.status = new StatusUpdates(() => this.statusNow() ?? broker.connectionStatus(), (shown) => node.status(shown));
    this.countdown = def.circuit === true ? setInterval(() => this.parts.some((p) => p.session.state.phase === 'circuit-open') && this.status.now(), 1000) : undefined;
    broker.connection.publishers.buffer.on('change', this.onBufferChange);
    this.user = {
      id: node.id,
      status: (pushed) => {
        if (this.parts.some((p) => hasChannel(p.session.state))) return;
        this.status.forget();
        node.status(pushed);
      },
    };
    this.storeUser = { id: node.id, status: () => this.status.now() };
    this.members = this.partitioned ? this.shareWithOthers() : undefined;
    if (this.partitioned) this.resolve();
    else this.startParts([{ topology }]);
    broker.register(this.user);
    dedupeNode?.register(this.storeUser);
    node.on('input', (msg, _send, done) => this.control(msg, done));
    node.on('close', (_removed: boolean, done: () => void) => this.close(done));
  }

  private context(): StatusContext {
    const { settings, parts } = this;
    const store = settings.dedupeNode;
    return { blockedBy: settings.config.broker.connection.publishers.buffer.state.blockedBy, store: store?.store?.description ?? '', circuit: parts[0]?.session.circuit, rateLimit: settings.values.rateLimit, storeForgets: store?.forgetsOnRestart };
  }

  private statusNow(): ReturnType<typeof sessionStatus> | undefined {
    const { parts, t } = this;
    if (this.partitioned) return partitionsStatus(parts.map((p) => p.view(t, this.context())), t, this.settings.values.rateLimit);
    return parts[0] && sessionStatus(parts[0].session.state, parts[0].session.stats, t, this.context());
  }

  private startParts(topologies: Array<{ topology: RetryTopologyConfig; partition?: number }>): void {
    if (this.closing) return;
    const { node, settings, recorder } = this;
    // The second output (settle events, stats) only when asked for: existing flows keep one output.
    const statsEveryMs = settings.def.events === true ? settings.values.statsEvery * 1000 : undefined;
    for (const { topology: part, partition } of topologies) {
      const session = new ConsumerSession(sessionOptions(settings, part, this.partitioned, recorder.forQueue(part.mainQueue)));
      const batch = settings.batch && { ...settings.batch, nextId: () => this.msgIds.next() };
      if (partition !== undefined && !this.owned.has(partition)) void session.standby(true); // starts standing by
      this.parts.push(startPart({ node, config: settings.config, session, topology: part, partition, status: this.status, recorder, toMsg: (delivered) => toMsg(delivered, this.msgIds, partition), batch, statsEveryMs, circuit: settings.def.circuit === true }));
    }
    this.status.now();
  }

  /** The instances of a partitioned configuration learn each other through the broker; each consumes its share of the partitions. */
  private shareWithOthers(): PartitionMembers {
    const { broker, topology } = this.settings.config;
    const id = `${hostname()}:${process.pid}:${this.node.id}:${randomUUID().slice(0, 8)}`;
    const members = new PartitionMembers({ connection: broker.connection, mainQueue: topology.mainQueue, partitions: topology.partitions ?? 0, id });
    members.on('share', (owned) => {
      this.owned = new Set(owned);
      for (const [i, part] of this.parts.entries()) void part.session.standby(!this.owned.has(i));
      this.status.soon();
    });
    members.on('warning', (text) => this.node.warn(text));
    members.start();
    return members;
  }

  /** The routing (consistent-hash exchange or computed key) decides the partition exchange's type: resolved once on the broker, asked again every 5 s while it cannot be. */
  private resolve(): void {
    const { topology } = this.settings.config;
    this.settings.config.partitionRouting().then(
      (routing) => this.startParts(Array.from({ length: topology.partitions ?? 0 }, (_, i) => ({ topology: partitionTopology(topology, i, routing), partition: i }))),
      (err: unknown) => {
        this.node.error((err as Error).message);
        if (!this.closing) setTimeout(() => this.resolve(), 5000).unref();
      },
    );
  }

  /** Control messages, like the core nodes': stop taking messages without a redeploy, and go on (`resume` also closes the kill switch). */
  private control(msg: NodeMessage, done: DoneFunction): void {
    const control = msg.topic === 'pause' ? 'pause' : msg.topic === 'resume' ? 'resume' : undefined;
    if (!control) {
      done(new Error(this.t('retry-consumer.errors.control', { topic: JSON.stringify(msg.topic ?? null) })));
      return;
    }
    this.members?.setAway(control === 'pause'); // a paused instance's partitions go to the others
    Promise.all(this.parts.map((p) => p.session[control]())).then(() => done(), (err: unknown) => done(err instanceof Error ? err : new Error(String(err))));
  }

  private close(done: () => void): void {
    const { def, config, dedupeNode } = this.settings;
    const { broker } = config;
    this.closing = true;
    this.status.stop();
    void this.members?.stop(); // its goodbye first: the others take its partitions as its channels close
    clearInterval(this.countdown);
    broker.connection.publishers.buffer.off('change', this.onBufferChange);
    this.recorder.close();
    // No new deliveries; the flow gets up to DRAIN_MS to settle what it holds (none when the nodes on the
    // consumer's wires stop too). What is still unsettled then goes back to the queue: redelivered, not lost.
    const wires = Array.isArray(def.wires) ? [def.wires[0]] : [];
    Promise.all(this.parts.map((p) => p.stop({ drainMs: DRAIN_MS, settlePath: () => downstreamRunning(this.RED, wires) })))
      .then(() => Promise.all([broker.deregister(this.user), dedupeNode?.deregister(this.storeUser)]))
      .then(() => done(), () => done());
  }
}
