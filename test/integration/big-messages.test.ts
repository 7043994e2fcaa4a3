/**
 * A 20 MB message with the default settings: published by retry-publish (larger than the 16 MiB
 * publish buffer, it waits alone instead of being refused) and consumed by a retry consumer. RabbitMQ
 * 3.10 takes it (its limit is 128 MiB); RabbitMQ 4.0's default max_message_size is 16 MiB, and the
 * error says so.
 */
import assert from 'node:assert/strict';
import * as amqp from 'amqplib';
import { AMQP_URL, Broker, waitFor } from '../helpers/broker';
import { brokerNode, configNode, consumerNode, tab, uniqueNames, type Names } from '../helpers/flows';
import { errorsOf, helper, loadFlow } from '../helpers/node-red';

type Msg = Record<string, any>;

async function brokerMajor(): Promise<number> {
  const model = await amqp.connect(AMQP_URL);
  try {
    return Number(model.connection.serverProperties.version.split('.')[0]);
  } finally {
    await model.close();
  }
}

describe('20 MB messages with the default settings (real broker)', function () {
  this.timeout(120_000);
  let broker: Broker;
  let names: Names;

  beforeEach(async () => {
    broker = await Broker.open();
    names = uniqueNames('big');
    broker.track('queue', names.mainQueue, names.retryQueue, names.parkingQueue);
    broker.track('exchange', names.mainExchange, names.retryExchange);
  });

  afterEach(async () => {
    await helper.unload();
    await broker.cleanup();
  });

  it('publishes a 20 MB body and consumes it whole (RabbitMQ 3.x), or names the broker limit (RabbitMQ 4 default)', async () => {
    await loadFlow([
      tab(),
      brokerNode(),
      configNode(names),
      consumerNode([['seen', 'ack']], { decode: 'buffer' }),
      { id: 'seen', type: 'helper', z: 'flow' },
      { id: 'ack', type: 'retry-settle', z: 'flow', action: 'ack', wires: [] },
      { id: 'pub', type: 'retry-publish', z: 'flow', broker: 'broker', mode: 'publish', exchange: names.mainExchange, routingKey: names.routingKey, persistent: true, wires: [['published']] },
      { id: 'published', type: 'helper', z: 'flow' },
    ]);
    const seen: Msg[] = [];
    const published: Msg[] = [];
    helper.getNode('seen').on('input', (m: Msg) => seen.push(m));
    helper.getNode('published').on('input', (m: Msg) => published.push(m));
    await broker.waitForConsumer(names.mainQueue);
    const body = Buffer.alloc(20 * 1024 * 1024, 7);
    helper.getNode('pub').receive({ payload: body });
    if ((await brokerMajor()) >= 4) {
      await waitFor(() => errorsOf('pub').length > 0, 'the publish refused');
      assert.match(errorsOf('pub').join('\n'), /larger than the broker's max_message_size/);
      return;
    }
    await waitFor(() => published.length === 1, 'the publish confirmed');
    await waitFor(() => seen.length === 1, 'the 20 MB message consumed');
    assert.equal((seen[0]!.payload as Buffer).length, body.length);
    assert.ok((seen[0]!.payload as Buffer).equals(body));
    assert.deepEqual(errorsOf('pub'), []);
  });
});
