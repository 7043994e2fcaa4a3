/**
 * The retry-settle node (step 4 of the walk) on a fake Node-RED: a msg's delivery is found through the
 * retry configuration it names, among that configuration's consumer sessions (fakes that record the
 * settle); an ack settles as asked, a retry is first what the error rules make of the failure.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ConsumerSession } from '../../../../src/lib/consume';
import { ErrorClassifier, HTTP_STARTING_RULES } from '../../../../src/lib/classify';
import type { SettleOutcome } from '../../../../src/lib/settle';
import { ConsumerSessions } from '../../../../src/nodes/shared/consumer-sessions';
import type { Node, NodeAPI, NodeDef, NodeMessage } from '../../../../src/nodes/shared/node-red';
import { NODE_TYPE } from '../../../../src/nodes/shared/node-types';
import { RetrySettleController } from '../../../../src/nodes/retry-settle/controller';

interface Call {
  id: string;
  action: string;
  reason: string;
  kind: string | undefined;
  delayMs: number | undefined;
}

function setup(def: Record<string, unknown>, rules: unknown[] = []) {
  const calls: Call[] = [];
  const settles = {
    issued: (id: string) => id.startsWith('s:'),
    settleNow: (id: string, action: string, reason: string, _failure: unknown, kind: string | undefined, _later: unknown, delayMs?: number): SettleOutcome => {
      calls.push({ id, action, reason, kind, delayMs });
      return { done: action === 'ack' ? 'acked' : 'retried', attempt: 1 };
    },
  };
  const consumers = new ConsumerSessions(rules.length > 0 ? new ErrorClassifier(rules) : undefined);
  consumers.add({ settles } as unknown as ConsumerSession, 'consumer1');
  const config = { id: 'cfg', type: NODE_TYPE.retryConfig, consumers };
  const RED = {
    _: (key: string) => key,
    nodes: { getNode: (id: string) => (id === 'cfg' ? config : null), eachNode: (each: (d: NodeDef) => void) => each({ id: 'cfg', type: NODE_TYPE.retryConfig }) },
  } as unknown as NodeAPI;
  const node = Object.assign(new EventEmitter(), { id: 'settle1', status: () => undefined, warn: () => undefined, error: () => undefined }) as unknown as Node;
  new RetrySettleController(RED, node, { id: 'settle1', type: NODE_TYPE.retrySettle, ...def });
  const dones: Array<Error | undefined> = [];
  const input = (msg: NodeMessage): void => {
    (node as unknown as EventEmitter).emit('input', msg, () => undefined, (err?: Error) => dones.push(err));
  };
  return { calls, dones, input };
}

const msgOf = (extra: Record<string, unknown> = {}): NodeMessage => ({ payload: 1, amqp: { deliveryId: 's:1', config: 'cfg' }, ...extra });

describe('retry-settle controller', () => {
  it('acks the delivery the msg names, through its configuration\'s session, and is done', () => {
    const { calls, dones, input } = setup({ action: 'ack' });
    input(msgOf());
    assert.deepEqual(calls.map((c) => [c.id, c.action]), [['s:1', 'ack']]);
    assert.deepEqual(dones, [undefined]);
  });

  it('without error rules, a retry is transient, with the msg\'s error as the reason and the wait it asks for', () => {
    const { calls, input } = setup({ action: 'retry', reason: 'failed' });
    input(msgOf({ error: { message: 'HTTP 503' }, retry: { delay: 2000 } }));
    assert.equal(calls.length, 1);
    assert.deepEqual([calls[0]?.action, calls[0]?.kind, calls[0]?.delayMs], ['retry', 'transient', 2000]);
    assert.match(String(calls[0]?.reason), /HTTP 503/);
    input({ ...msgOf(), amqp: { deliveryId: 's:2', config: 'cfg' } });
    assert.equal(calls[1]?.reason, 'failed', 'the node\'s reason when the msg has no error');
  });

  it('with error rules, a 4xx is settled as permanent (it parks at once), a 5xx as transient (a retry)', () => {
    const { calls, input } = setup({ action: 'retry' }, [...HTTP_STARTING_RULES]);
    input(msgOf({ error: { message: 'bad request' }, statusCode: 400 }));
    input({ ...msgOf({ error: { message: 'unavailable' }, statusCode: 503 }), amqp: { deliveryId: 's:2', config: 'cfg' } });
    assert.deepEqual(calls.map((c) => c.kind), ['permanent', 'transient']);
  });

  it('a msg without a delivery id, or one no session here issued, cannot settle: an error, or a warning (the broker redelivers it)', () => {
    const { calls, dones, input } = setup({ action: 'ack' });
    input({ payload: 1 });
    assert.match(String(dones[0]?.message), /msg\.amqp\.deliveryId is missing/);
    input({ payload: 1, amqp: { deliveryId: 'other:1', config: 'cfg' } });
    assert.equal(dones[1], undefined, 'its consumer is gone: a warning, not an error');
    assert.deepEqual(calls, []);
  });
});
