/**
 * A running retry-publish node: owns its confirm publisher on the broker's connection and its
 * registration with the broker; publishes each msg (in the order they came, when a partition key is
 * looked up first) and shows a failed publish until the next success. `close()` closes its publisher
 * and deregisters.
 */
import type { Options } from 'amqplib';
import { randomUUID } from 'node:crypto';
import { publishOptionsProblem } from '../../lib/amqp';
import { encodePayload } from '../../lib/message';
import { PublishError } from '../../lib/publish';
import { ensureQueueExists } from '../../lib/topology';
import { messagingAttributes, openTelemetryTracer, setTrace, spanName, traceOf, type MessageSpan } from '../../lib/trace';
import type { RetryBrokerNode } from '../shared/broker-node';
import type { Translate } from '../shared/i18n';
import type { DoneFunction, Node, NodeMessage, NodeStatus, SendFunction } from '../shared/node-red';
import { publishOptions, publishTarget, type PublishSettings } from '../shared/publish-options';
import type { PartitionRoute } from './partition-key';

type Target = { exchange: string; routingKey: string; partition?: number };

export interface PublishParts {
  node: Node;
  t: Translate;
  broker: RetryBrokerNode;
  settings: PublishSettings;
  /** The partitioned route, when the node publishes to a partitioned retry configuration. */
  route: PartitionRoute | undefined;
  /** A queue to make sure of once per connection (e.g. the reply queue); empty: none. */
  declareQueue: string;
}

/** A failed publish in a few words, for the node's status (the full text goes to the log and Catch). */
export function failureReason(err: unknown, t: Translate): string {
  if (err instanceof PublishError && err.failure !== 'channel-closed') return t(`retry-publish.status.reason.${err.failure}`);
  // "publish to exchange 'x' failed: exchange 'x' does not exist (404 NOT_FOUND; …)" → "exchange 'x' does not exist"
  const text = (err instanceof Error ? err.message : String(err)).replace(/^publish to .*? failed: /, '').replace(/ \(.*$/s, '');
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

export class PublishController {
  // Red after a failed publish (the error itself goes to Catch), back to the broker's status at the next success.
  // The broker pushes a status only when its text changes: keep the last one pushed (it goes on arriving
  // while the red one shows) and show that one, never a status computed here — one the broker never
  // pushed would stay, e.g. `buffer 19/1000`, once the broker has no change to push.
  private failing = false;
  private brokerStatus: NodeStatus | undefined;
  private readonly user: { id: string; status(status: NodeStatus): void };
  private readonly publisher: ReturnType<RetryBrokerNode['connection']['publisher']>;
  /** A publish span per msg only when an OpenTelemetry SDK is registered when the node starts. */
  private readonly tracer = openTelemetryTracer();
  /** Targets are found one msg after the other (a key expression is asynchronous): publishes keep the order the msgs came in. */
  private previous: Promise<void> = Promise.resolve();

  constructor(private readonly parts: PublishParts) {
    const { node, broker, declareQueue } = parts;
    this.user = {
      id: node.id,
      status: (status) => {
        this.brokerStatus = status;
        if (!this.failing) node.status(status);
      },
    };
    broker.register(this.user);
    // Checked passively, declared plain and durable only when missing, so a queue with arguments is never redeclared.
    // A producer's msg waits in the broker's buffer through a reconnect: nothing else would send it.
    this.publisher = broker.connection.publisher(node.id, {
      survivesReconnect: true,
      prepare: declareQueue === '' ? undefined : () => ensureQueueExists(broker.connection, declareQueue),
    });
    node.on('input', (msg, send, done) => this.input(msg, send, done));
    node.on('close', (_removed, done) => {
      broker.connection
        .closePublisher(node.id)
        .then(() => broker.deregister(this.user))
        .then(done, done);
    });
  }

  private input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const { route, settings } = this.parts;
    if (!route) {
      this.publishTo(msg, () => publishTarget(settings, msg), send, done);
      return;
    }
    this.previous = this.previous.then(() =>
      route(msg).then(
        (target) => this.publishTo(msg, () => target, send, done),
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      ),
    );
  }

  private publishTo(msg: NodeMessage, targetOf: () => Target, send: SendFunction, done: DoneFunction): void {
    let prepared: { target: Target; options: Options.Publish; content: Buffer; span: MessageSpan | undefined };
    try {
      prepared = this.prepare(msg, targetOf());
    } catch (err) {
      done(err as Error);
      return;
    }
    const { target, options, content, span } = prepared;
    this.publisher.publish(target.exchange, target.routingKey, content, options).then(
      () => {
        span?.end();
        const amqp = (msg.amqp && typeof msg.amqp === 'object' ? msg.amqp : {}) as Record<string, unknown>;
        const traceparent = (options.headers as Record<string, unknown>).traceparent;
        const partition = target.partition === undefined ? {} : { partition: target.partition };
        msg.amqp = Object.assign({}, amqp, { published: { exchange: target.exchange, routingKey: target.routingKey, messageId: options.messageId, traceparent, ...partition } });
        if (this.failing) {
          this.failing = false;
          if (this.brokerStatus) this.parts.node.status(this.brokerStatus); // register() pushed one at once
        }
        send(msg);
        done();
      },
      (err: unknown) => {
        span?.fail(err);
        span?.end();
        this.failing = true;
        this.parts.node.status({ fill: 'red', shape: 'ring', text: this.parts.t('retry-publish.status.failed', { reason: failureReason(err, this.parts.t) }) });
        done(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  /** The msg's content and properties, and its publish span; throws what is wrong with the msg. */
  private prepare(msg: NodeMessage, target: Target): { target: Target; options: Options.Publish; content: Buffer; span: MessageSpan | undefined } {
    const encoded = encodePayload(msg.payload);
    const content = encoded.content;
    const options = publishOptions(this.parts.settings, msg, encoded.contentType, randomUUID);
    const problem = publishOptionsProblem(options as Record<string, unknown>);
    if (problem !== undefined) throw new Error(`msg.properties: ${problem}`);
    if (this.tracer === undefined) return { target, options, content, span: undefined };
    // The publish span is a child of the trace context the msg carries; the message carries the span's.
    const headers = options.headers as Record<string, unknown>;
    const span = this.tracer.start(spanName('publish', target.exchange), 'producer', messagingAttributes('publish', target.exchange, target.routingKey, { properties: options, content }), traceOf(headers));
    setTrace(headers, span.trace);
    return { target, options, content, span };
  }
}
