/**
 * `retry-consumer`: consumes the main queue of a retry-config with manual ack and sends one msg per
 * delivery. The delivery itself stays with the session; the msg carries its opaque id and names the
 * retry configuration (`msg.amqp.config`), which owns the sessions the end nodes settle through. The
 * composition root: reads its settings (`settings.ts`) and builds its controller (`controller.ts`).
 */
import { registerHistoryEndpoint } from '../shared/history-endpoint';
import { translator } from '../shared/i18n';
import { registerMetricsEndpoint } from '../shared/metrics';
import type { NodeAPI, NodeDef } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import type { RetryConsumerNode } from '../shared/retry-config-node';
import { RetryConsumerController } from './controller';
import { consumerSettings } from './settings';

export = function register(RED: NodeAPI): void {
  function RetryConsumer(this: RetryConsumerNode, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const t = translator(RED);
    const settings = consumerSettings(RED, this, def);
    if ('problems' in settings) {
      const why = settings.problems.join('; ');
      this.startProblem = why;
      this.status({ fill: 'red', shape: 'ring', text: why });
      this.error(t('retry-consumer.errors.notStarted', { why }));
      return;
    }
    new RetryConsumerController(RED, this, settings, t);
  }
  RED.nodes.registerType(NODE_TYPE.retryConsumer, RetryConsumer);
  registerMetricsEndpoint(RED);
  registerHistoryEndpoint(RED);
};
