/**
 * One consumer session wired to its retry-consumer node (step 3 of the walk), with a fake session and
 * node: a delivery becomes a msg on the first output, the session is reachable through its
 * configuration (where the end nodes find it) until it has stopped, and what it says reaches the node.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ConsumerSession } from '../../../../src/lib/consume';
import type { DeliveredMessage } from '../../../../src/lib/message';
import { ConsumerSessions } from '../../../../src/nodes/shared/consumer-sessions';
import type { Node, NodeMessage } from '../../../../src/nodes/shared/node-red';
import type { RetryConfigNode } from '../../../../src/nodes/shared/retry-config-node';
import type { StatusUpdates } from '../../../../src/nodes/shared/status';
import { startPart } from '../../../../src/nodes/retry-consumer/consumer-part';
import { consumerTopology } from '../../fixtures/topology-seed';

function setup() {
  const deliveries = Object.assign(new EventEmitter(), { inFlight: 0 });
  const log: string[] = [];
  const session = Object.assign(new EventEmitter(), {
    deliveries,
    settles: { issued: (id: string) => id.startsWith('s:') },
    queues: { parking: 0, depths: {} },
    circuit: undefined,
    state: { phase: 'consuming' },
    stats: {},
    start: () => log.push('start'),
    stop: () => {
      log.push('stop');
      return Promise.resolve();
    },
  });
  const consumers = new ConsumerSessions();
  const config = { id: 'cfg', consumers, broker: undefined } as unknown as RetryConfigNode;
  const sent: unknown[] = [];
  const node = {
    id: 'consumer1',
    send: (msg: unknown) => sent.push(msg),
    warn: (text: string) => log.push(`warn ${text}`),
    error: (text: string, msg?: NodeMessage) => log.push(`error ${text}${msg ? ` (msg.error ${JSON.stringify(msg.error)})` : ''}`),
    log: (text: string) => log.push(`log ${text}`),
  } as unknown as Node;
  const status = { soon: () => undefined, now: () => undefined } as unknown as StatusUpdates;
  const part = startPart({
    node,
    config,
    session: session as unknown as ConsumerSession,
    topology: { ...consumerTopology, mainQueue: `cp-${Math.random()}` },
    status,
    recorder: { depth: () => undefined },
    toMsg: (d: DeliveredMessage) => ({ payload: d.payload, amqp: d.amqp }),
    statsEveryMs: undefined,
    circuit: false,
  });
  return { part, session, deliveries, consumers, sent, log };
}

const delivered = (id: string): DeliveredMessage => ({ payload: { n: 1 }, amqp: { deliveryId: id } }) as unknown as DeliveredMessage;

describe('consumer part', () => {
  it('starts the session and sends each delivery as a msg on the first output', async () => {
    const { part, deliveries, sent, log } = setup();
    assert.deepEqual(log, ['start']);
    deliveries.emit('message', delivered('s:1'));
    assert.deepEqual(sent, [{ payload: { n: 1 }, amqp: { deliveryId: 's:1' } }]);
    await part.stop({});
  });

  it('is found through its configuration by the ids it issued, until it has stopped', async () => {
    const { part, session, consumers } = setup();
    assert.equal(consumers.issuer('s:1'), session);
    await part.stop({});
    assert.equal(consumers.issuer('s:1'), undefined);
  });

  it('says what the deliveries and the session say: warnings, errors, a body that does not decode (with msg.error), good news as a log', async () => {
    const { part, session, deliveries, log } = setup();
    deliveries.emit('warning', 'slow settle');
    deliveries.emit('error', 'settle failed');
    deliveries.emit('invalid', delivered('s:2'), 'not JSON');
    session.emit('warning', 'channel lost');
    session.emit('info', 'store answers again');
    assert.deepEqual(log.slice(1), ['warn slow settle', 'error settle failed', 'error message s:2: not JSON (msg.error {"message":"not JSON"})', 'warn channel lost', 'log store answers again']);
    await part.stop({});
    assert.equal(log.at(-1), 'stop');
  });
});
