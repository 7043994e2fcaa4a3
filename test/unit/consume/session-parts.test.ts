/** What a consumer session builds from its options: here, the main queue's arguments its channel's dead-letter frame is chosen by. */
import assert from 'node:assert/strict';
import { mainQueueArguments } from '../../../src/lib/consume/session-parts';
import { deadLetterFrame, planTopology, type RetryTopologyConfig } from '../../../src/lib/topology';
import { seedTopology } from '../fixtures/topology-seed';

const argumentsOf = (topology: RetryTopologyConfig) => mainQueueArguments(planTopology(topology), topology);

describe('mainQueueArguments: the main queue as planned', () => {
  it('a classic main queue: its arguments as declared (the dead-letter exchange with them), so its dead-letters are nacks on every version', () => {
    const args = argumentsOf({ ...seedTopology, mainQueueArguments: { 'x-max-priority': 5 } });
    assert.deepEqual(args, { 'x-max-priority': 5, 'x-dead-letter-exchange': 'retry-exchange' });
    assert.equal(deadLetterFrame(args, '4.3.6'), 'nack');
  });

  it('a quorum main queue, said in its arguments or made quorum by broker-native retry: rejects on 4.3', () => {
    assert.equal(deadLetterFrame(argumentsOf({ ...seedTopology, mainQueueArguments: { 'x-queue-type': 'quorum' } }), '4.3.6'), 'reject');
    const broker = argumentsOf({ ...seedTopology, delayedRetry: 'broker', retryDelaysMs: [1000, 30_000] });
    assert.equal(broker['x-queue-type'], 'quorum');
    assert.equal(deadLetterFrame(broker, '4.3.6'), 'reject');
  });

  it('a main queue the plan does not name (not expected): the configuration\'s own arguments', () => {
    const topology = { ...seedTopology, mainQueueArguments: { 'x-queue-type': 'quorum' } };
    assert.deepEqual(mainQueueArguments({ exchanges: [], queues: [], bindings: [] }, topology), { 'x-queue-type': 'quorum' });
  });
});
