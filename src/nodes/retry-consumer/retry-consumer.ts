/**
 * `retry-consumer`: consumes the main queue of a retry-config with manual ack and sends one msg per
 * delivery. The delivery itself stays with the session; the msg carries its opaque id and names the
 * retry configuration (`msg.amqp.config`), which owns the sessions the end nodes settle through.
 */
import { ConsumerSession } from '../../lib/consume';
import { isPartitioned, partitionTopology, type RetryTopologyConfig } from '../../lib/topology';
import type { DecodeMode, DeliveredMessage } from '../../lib/message';
import { readNumberFields } from '../../lib/rules';
import { openTelemetryTracer } from '../../lib/trace';
import type { ConfigUser } from '../shared/users';
import { findDedupeStore, keyReader, type DedupeStoreNode } from '../shared/dedupe-node';
import { translator } from '../shared/i18n';
import { registerHistoryEndpoint } from '../shared/history-endpoint';
import { metrics, registerMetricsEndpoint } from '../shared/metrics';
import { downstreamRunning, type NodeAPI, type NodeDef, type NodeMessage } from '../shared/node-red';
import { DECODE_MODES, NUMBER_FIELDS, restartMaxProblem } from '../shared/properties';
import { findRetryConfig, type RetryConsumerNode } from '../shared/retry-config-node';
import { MsgIds } from '../shared/msg-ids';
import { StatusUpdates } from '../shared/status';
import { startPart, type ConsumerPart } from './consumer-part';
import { hasChannel, sessionStatus, type StatusContext } from './consumer-status';
import { partitionsStatus } from './partition-status';

/**
 * How long a stopping consumer lets the flow settle the messages it holds before closing its channel
 * (Node-RED waits 15 s for a node to close).
 */
const DRAIN_MS = 10_000;

/** The msg of a delivery; `ids`: its `_msgid` given here (a msg the consumer sends), not by Node-RED. */
function toMsg(delivered: DeliveredMessage, ids?: MsgIds): NodeMessage {
  const msg: NodeMessage = { payload: delivered.payload, topic: delivered.amqp.routingKey, amqp: delivered.amqp, retry: delivered.retry };
  if (ids !== undefined) msg._msgid = ids.next();
  if (delivered.traceparent !== undefined) {
    msg.traceparent = delivered.traceparent;
    if (delivered.tracestate !== undefined) msg.tracestate = delivered.tracestate;
  }
  return msg;
}

export = function register(RED: NodeAPI): void {
  function RetryConsumer(this: RetryConsumerNode, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const t = translator(RED);
    const ordered = def.mode === 'ordered';
    const fields = NUMBER_FIELDS['retry-consumer'];
    const { values, problems } = readNumberFields(def, {
      // Ordered processing forces prefetch 1, so its field is not read then.
      ...(ordered ? {} : { prefetch: fields.prefetch }),
      ...(ordered ? { orderedPause: fields.orderedPause } : {}),
      settleTimeout: fields.settleTimeout,
      parkingWatch: fields.parkingWatch,
      statsEvery: fields.statsEvery,
      circuitActivation: fields.circuitActivation,
      circuitTripPercent: fields.circuitTripPercent,
      circuitWindow: fields.circuitWindow,
      circuitRestart: fields.circuitRestart,
      circuitRestartMax: fields.circuitRestartMax,
      circuitProbes: fields.circuitProbes,
      rateLimit: fields.rateLimit,
    });
    const restartMax = restartMaxProblem(values.circuitRestart, values.circuitRestartMax);
    if (restartMax !== undefined) problems.push(restartMax);
    // The second output (settle events, stats) only when asked for: existing flows keep one output.
    const events = def.events === true;
    const config = findRetryConfig(RED, def.config);
    if (!config) problems.unshift('no retry configuration selected');
    else if (!config.topology || !config.broker) problems.unshift(config.problems.join('; ') || 'retry configuration has no broker');
    // Deduplication: an optional store config node, and how a delivery's key is read.
    let dedupeNode: DedupeStoreNode | undefined;
    let keyOf: ReturnType<typeof keyReader> | undefined;
    if (typeof def.dedupe === 'string' && def.dedupe !== '') {
      dedupeNode = findDedupeStore(RED, def.dedupe);
      if (!dedupeNode) problems.push('the selected deduplication store does not exist (deleted or not deployed)');
      else if (!dedupeNode.store) problems.push(`deduplication store: ${dedupeNode.problems.join('; ') || 'not usable'}`);
      try {
        keyOf = keyReader(RED, node, def, toMsg);
      } catch (err) {
        problems.push((err as Error).message);
      }
    }
    if (!config || !config.topology || !config.broker || problems.length > 0) {
      const why = problems.join('; ');
      node.startProblem = why;
      node.status({ fill: 'red', shape: 'ring', text: why });
      node.error(t('retry-consumer.errors.notStarted', { why }));
      return;
    }
    const { broker, topology } = config;
    const decode: DecodeMode = DECODE_MODES.find((m) => m === def.decode) ?? 'auto';
    // Its settles are counted for Prometheus (by main queue, or partition queue) and in its own 24 h history (by consumer).
    const recorder = metrics.consumer({ consumer: node.id, config: config.id, queue: topology.mainQueue });
    // A partitioned configuration: one ordered session per partition queue.
    const partitioned = isPartitioned(topology);
    const sessionFor = (part: RetryTopologyConfig): ConsumerSession =>
      new ConsumerSession({
        connection: broker.connection,
        copies: broker.connection.publisher('settle'),
        configId: config.id,
        topology: part,
        // Ordered processing needs one message at a time: nothing may overtake a failed one.
        prefetch: ordered || partitioned ? 1 : (values.prefetch ?? 10),
        ordered: ordered || partitioned ? { pauseMs: (values.orderedPause ?? 5) * 1000 } : undefined,
        parkingWatchMs: values.parkingWatch * 1000,
        queueWatch: broker.queueWatch,
        settleTimeoutMs: values.settleTimeout * 1000,
        decode,
        invalidBody: def.invalidBody === 'error' ? 'error' : 'park',
        definitionReader: broker.managementApi,
        metrics: recorder.forQueue(part.mainQueue),
        // The kill switch and the rate limit (issue 26): off unless asked for.
        circuit:
          def.circuit === true
            ? {
                activation: values.circuitActivation,
                tripRatio: values.circuitTripPercent / 100,
                windowMs: values.circuitWindow * 1000,
                restartMs: values.circuitRestart * 1000,
                restartMaxMs: values.circuitRestartMax * 1000,
                probes: values.circuitProbes,
              }
            : undefined,
        rateLimit: values.rateLimit,
        // Spans only when an OpenTelemetry SDK is registered when the consumer starts (nothing is loaded otherwise).
        tracer: openTelemetryTracer(),
        dedupe:
          dedupeNode?.store && keyOf
            ? {
                store: dedupeNode.store,
                keyOf,
                noKey: def.dedupeNoKey === 'park' ? 'park' : 'process',
                storeDown: def.dedupeStoreDown === 'process' ? 'process' : 'pause',
                leaseMs: dedupeNode.leaseMs,
                retentionMs: dedupeNode.retentionMs,
              }
            : undefined,
      });

    const buffer = broker.connection.publishers.buffer;
    const parts: ConsumerPart[] = [];
    const msgIds = new MsgIds();
    const sentMsg = (delivered: DeliveredMessage): NodeMessage => toMsg(delivered, msgIds);
    const context = (): StatusContext => ({ blockedBy: buffer.state.blockedBy, store: dedupeNode?.store?.description ?? '', circuit: parts[0]?.session.circuit, rateLimit: values.rateLimit, storeForgets: dedupeNode?.forgetsOnRestart });
    const status = new StatusUpdates(
      () => (partitioned ? partitionsStatus(parts.map((p) => p.view(t, context())), t, values.rateLimit) : parts[0] && sessionStatus(parts[0].session.state, parts[0].session.stats, t, context())) ?? broker.connectionStatus(),
      (shown) => node.status(shown),
    );
    // While the kill switch is open its status counts down to the probe.
    const countdown = def.circuit === true ? setInterval(() => parts.some((p) => p.session.state.phase === 'circuit-open') && status.now(), 1000) : undefined;
    const onBufferChange = (): void => status.soon();
    buffer.on('change', onBufferChange);
    const anyChannel = (): boolean => parts.some((p) => hasChannel(p.session.state));

    const user: ConfigUser = {
      id: node.id,
      // The broker pushes connection states; while consuming (or paused), the session's own status wins.
      status: (pushed) => {
        if (!anyChannel()) {
          status.forget();
          node.status(pushed);
        }
      },
    };
    let closing = false;
    const startParts = (topologies: Array<{ topology: RetryTopologyConfig; partition?: number }>): void => {
      if (closing) return;
      for (const { topology: part, partition } of topologies) {
        parts.push(
          startPart({ node, config, session: sessionFor(part), topology: part, partition, status, recorder, toMsg: sentMsg, statsEveryMs: events ? values.statsEvery * 1000 : undefined, circuit: def.circuit === true }),
        );
      }
      status.now();
    };
    // The routing (consistent-hash exchange or computed key) decides the partition exchange's type: resolved once on the broker, asked again every 5 s while it cannot be.
    const resolve = (): void => {
      config.partitionRouting().then(
        (routing) => startParts(Array.from({ length: topology.partitions ?? 0 }, (_, i) => ({ topology: partitionTopology(topology, i, routing), partition: i }))),
        (err: unknown) => {
          node.error((err as Error).message);
          if (!closing) setTimeout(resolve, 5000).unref();
        },
      );
    };
    if (partitioned) resolve();
    else startParts([{ topology }]);
    broker.register(user);
    // The store's connection is open while a consumer uses it (its status follows the session's).
    const storeUser: ConfigUser = { id: node.id, status: () => status.now() };
    dedupeNode?.register(storeUser);

    // Control messages, like the core nodes': stop taking messages without a redeploy, and go on (`resume` also closes the kill switch).
    node.on('input', (msg, _send, done) => {
      const control = msg.topic === 'pause' ? 'pause' : msg.topic === 'resume' ? 'resume' : undefined;
      if (!control) {
        done(new Error(t('retry-consumer.errors.control', { topic: JSON.stringify(msg.topic ?? null) })));
        return;
      }
      Promise.all(parts.map((p) => p.session[control]())).then(() => done(), (err: unknown) => done(err instanceof Error ? err : new Error(String(err))));
    });

    node.on('close', (_removed, done) => {
      closing = true;
      status.stop();
      clearInterval(countdown);
      buffer.off('change', onBufferChange);
      recorder.close();
      // No new deliveries; the flow gets up to DRAIN_MS to settle what it holds (none when the nodes on the
      // consumer's wires stop too). What is still unsettled then goes back to the queue: redelivered, not lost.
      const wires = Array.isArray(def.wires) ? [def.wires[0]] : [];
      Promise.all(parts.map((p) => p.stop({ drainMs: DRAIN_MS, settlePath: () => downstreamRunning(RED, wires) })))
        .then(() => Promise.all([broker.deregister(user), dedupeNode?.deregister(storeUser)]))
        .then(() => done(), () => done());
    });
  }
  RED.nodes.registerType('retry-consumer', RetryConsumer);
  registerMetricsEndpoint(RED);
  registerHistoryEndpoint(RED);
};
