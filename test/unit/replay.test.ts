import assert from 'node:assert/strict';
import type { MessageProperties } from 'amqplib';
import { parkHeaders } from './fixtures/parked';
import { replayPublishOptions, replayTarget, REPLAY_HEADER } from '../../src/lib/parking/replay';

describe('replay of parked messages', () => {
  const topology = { mainExchange: 'main-exchange', mainQueue: 'main-queue', routingKeys: ['srvc.transact.cash'] };

  it('goes back to where the message was first published', () => {
    assert.deepEqual(replayTarget({ 'park-original-exchange': 'ex', 'park-original-routing-key': 'rk' }, topology), { exchange: 'ex', routingKey: 'rk' });
    // Dead-lettered into parking by the broker (quorum delivery limit): its x-death says where from.
    const deadLettered = { 'x-death': [{ queue: 'main-queue', reason: 'delivery_limit', count: 1, exchange: 'main-exchange', 'routing-keys': ['srvc.transact.cash'] }] };
    assert.deepEqual(replayTarget(deadLettered, topology), { exchange: 'main-exchange', routingKey: 'srvc.transact.cash' });
    assert.deepEqual(replayTarget(undefined, topology), { exchange: 'main-exchange', routingKey: 'srvc.transact.cash' });
    assert.deepEqual(replayTarget(undefined, { ...topology, mainExchange: '' }), { exchange: '', routingKey: 'main-queue' });
  });

  const parked = {
    contentType: 'application/json',
    messageId: 'm-1',
    expiration: '1000',
    headers: {
      custom: 'kept',
      ...parkHeaders,
      'retry-first-seen': 1,
      'x-death': [{ queue: 'main-queue', reason: 'rejected', count: 2 }],
      'x-first-death-reason': 'rejected',
    },
  } as unknown as MessageProperties;

  it('drops the park headers and, by default, the attempt history', () => {
    const options = replayPublishOptions(parked, true);
    assert.deepEqual(options.headers, { custom: 'kept', [REPLAY_HEADER]: 1 });
    assert.equal(options.messageId, 'm-1');
    assert.equal(options.contentType, 'application/json');
    assert.equal(options.expiration, undefined);
    assert.equal(options.mandatory, true);
  });

  it('can keep the attempt history, and counts replays', () => {
    const options = replayPublishOptions({ ...parked, headers: { ...parked.headers, [REPLAY_HEADER]: 2 } }, false);
    assert.equal(options.headers?.['retry-attempt'], 3);
    assert.ok(Array.isArray(options.headers?.['x-death']));
    assert.equal(options.headers?.['park-reason'], undefined);
    assert.equal(options.headers?.[REPLAY_HEADER], 3);
  });
});
