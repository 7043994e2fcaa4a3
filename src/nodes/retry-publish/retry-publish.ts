/**
 * `retry-publish`: publishes msg.payload with publisher confirms and `mandatory`, or answers a consumed
 * message on its `replyTo` queue with the same correlationId. The msg goes on only once the broker
 * confirmed it; a message nobody could route is an error, not a silent loss.
 */
import { statusKey, translator, type Translate } from '../shared/i18n';
import { randomUUID } from 'node:crypto';
import type { Options } from 'amqplib';
import { publishOptionsProblem } from '../../lib/amqp';
import { PublishError } from '../../lib/publish';
import { encodePayload } from '../../lib/message';
import { ensureQueueExists } from '../../lib/topology';
import { messagingAttributes, openTelemetryTracer, setTrace, spanName, traceOf, type MessageSpan } from '../../lib/trace';
import { findBroker } from '../shared/broker-node';
import type { ConfigUser } from '../shared/users';
import { stringProp, type Node, type NodeAPI, type NodeDef, type NodeMessage, type NodeStatus } from '../shared/node-red';
import { publishTarget, publishOptions } from '../shared/publish-options';
import { partitionSettings } from './partition-key';

/** A failed publish in a few words, for the node's status (the full text goes to the log and Catch). */
function failureReason(err: unknown, t: Translate): string {
  if (err instanceof PublishError && err.failure !== 'channel-closed') return t(`retry-publish.status.reason.${err.failure}`);
  // "publish to exchange 'x' failed: exchange 'x' does not exist (404 NOT_FOUND; …)" → "exchange 'x' does not exist"
  const text = (err instanceof Error ? err.message : String(err)).replace(/^publish to .*? failed: /, '').replace(/ \(.*$/s, '');
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

export = function register(RED: NodeAPI): void {
  function RetryPublish(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const t = translator(RED);
    const broker = findBroker(RED, def.broker);
    if (!broker) {
      node.status({ fill: 'red', shape: 'ring', text: statusKey('retry-publish.status.noBroker') });
      node.error('publish node not started: no broker configured');
      return;
    }
    // Partitioned: the msg's key picks a partition of a partitioned retry configuration.
    const partitions = partitionSettings(RED, node, def);
    if (partitions.problem !== undefined) {
      node.status({ fill: 'red', shape: 'ring', text: partitions.problem });
      node.error(`publish node not started: ${partitions.problem}`);
      return;
    }
    const settings = {
      mode: def.mode === 'reply' ? ('reply' as const) : ('publish' as const),
      exchange: stringProp(def.exchange),
      routingKey: stringProp(def.routingKey),
      persistent: def.persistent !== false,
      contentType: stringProp(def.contentType),
      keepIds: def.keepIds === true,
    };
    // Red after a failed publish (the error itself goes to Catch), back to the broker's status at the next success.
    // The broker pushes a status only when its text changes: keep the last one pushed (it goes on arriving
    // while the red one shows) and show that one, never a status computed here — one the broker never
    // pushed would stay, e.g. `buffer 19/1000`, once the broker has no change to push.
    let failing = false;
    let brokerStatus: NodeStatus | undefined;
    const user: ConfigUser = {
      id: node.id,
      status: (status) => {
        brokerStatus = status;
        if (!failing) node.status(status);
      },
    };
    broker.register(user);
    // The queue to make sure of (e.g. the reply queue), once per connection: checked passively,
    // declared plain and durable only when missing, so a queue with arguments is never redeclared.
    const declareQueue = stringProp(def.declareQueue);
    // A producer's msg waits in the broker's buffer through a reconnect: nothing else would send it.
    const publisher = broker.connection.publisher(node.id, {
      survivesReconnect: true,
      prepare: declareQueue === '' ? undefined : () => ensureQueueExists(broker.connection, declareQueue),
    });

    // A publish span per msg only when an OpenTelemetry SDK is registered when the node starts.
    const tracer = openTelemetryTracer();

    // Targets are found one msg after the other (a key expression is asynchronous): publishes keep the order the msgs came in.
    let previous: Promise<void> = Promise.resolve();
    node.on('input', (msg: NodeMessage, send, done) => {
      const route = settings.mode === 'publish' ? partitions.route : undefined;
      if (!route) {
        publishTo(msg, () => publishTarget(settings, msg), send, done);
        return;
      }
      previous = previous.then(() =>
        route(msg).then(
          (target) => publishTo(msg, () => target, send, done),
          (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
        ),
      );
    });

    function publishTo(msg: NodeMessage, targetOf: () => { exchange: string; routingKey: string; partition?: number }, send: (msg: NodeMessage) => void, done: (err?: Error) => void): void {
      let span: MessageSpan | undefined;
      let target: { exchange: string; routingKey: string; partition?: number };
      let options: Options.Publish;
      let content: Buffer;
      try {
        target = targetOf();
        const encoded = encodePayload(msg.payload);
        content = encoded.content;
        options = publishOptions(settings, msg, encoded.contentType, randomUUID);
        const problem = publishOptionsProblem(options as Record<string, unknown>);
        if (problem !== undefined) throw new Error(`msg.properties: ${problem}`);
        if (tracer !== undefined) {
          // The publish span is a child of the trace context the msg carries; the message carries the span's.
          const headers = options.headers as Record<string, unknown>;
          span = tracer.start(spanName('publish', target.exchange), 'producer', messagingAttributes('publish', target.exchange, target.routingKey, { properties: options, content }), traceOf(headers));
          setTrace(headers, span.trace);
        }
      } catch (err) {
        done(err as Error);
        return;
      }
      publisher
        .publish(target.exchange, target.routingKey, content, options)
        .then(
          () => {
            span?.end();
            const amqp = (msg.amqp && typeof msg.amqp === 'object' ? msg.amqp : {}) as Record<string, unknown>;
            const traceparent = (options.headers as Record<string, unknown>).traceparent;
            const partition = target.partition === undefined ? {} : { partition: target.partition };
            msg.amqp = Object.assign({}, amqp, { published: { exchange: target.exchange, routingKey: target.routingKey, messageId: options.messageId, traceparent, ...partition } });
            if (failing) {
              failing = false;
              if (brokerStatus) node.status(brokerStatus); // register() pushed one at once
            }
            send(msg);
            done();
          },
          (err: unknown) => {
            span?.fail(err);
            span?.end();
            failing = true;
            node.status({ fill: 'red', shape: 'ring', text: t('retry-publish.status.failed', { reason: failureReason(err, t) }) });
            done(err instanceof Error ? err : new Error(String(err)));
          },
        );
    }
    node.on('close', (_removed, done) => {
      broker.connection
        .closePublisher(node.id)
        .then(() => broker.deregister(user))
        .then(done, done);
    });
  }
  RED.nodes.registerType('retry-publish', RetryPublish);
};
