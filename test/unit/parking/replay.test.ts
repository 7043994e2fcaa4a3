import assert from 'node:assert/strict';
import type { MessageProperties } from 'amqplib';
import { parkHeaders } from '../fixtures/parked';
import { replayPublishOptions, replayTarget, REPLAY_HEADER } from '../../../src/lib/parking/replay';

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

describe('the replayed copy says who replayed it, when, in which run, and where to', () => {
  const properties = { messageId: 'm-1', headers: { 'park-reason': 'timeout', 'replay-redirected-to': 'old / key', 'replay-id': 'earlier', tenant: 'a' } } as unknown as MessageProperties;

  it('stamps replayed-by, replayed-at, replay-id and drops an earlier replay’s redirect', () => {
    const headers = replayPublishOptions(properties, true, { by: 'alice', at: '2026-11-28T05:00:00.000Z', replayId: 'job-1' }).headers as Record<string, unknown>;
    assert.equal(headers['replayed-by'], 'alice');
    assert.equal(headers['replayed-at'], '2026-11-28T05:00:00.000Z');
    assert.equal(headers['replay-id'], 'job-1');
    assert.equal(headers['replay-redirected-to'], undefined);
    assert.equal(headers[REPLAY_HEADER], 1);
    assert.equal(headers.tenant, 'a');
    assert.equal(headers['park-reason'], undefined);
  });

  it('a redirect is named on the copy', () => {
    const headers = replayPublishOptions(properties, true, { by: 'flow n1', at: 'now', replayId: 'r', redirect: { exchange: '', routingKey: 'fixer' } }).headers as Record<string, unknown>;
    assert.equal(headers['replay-redirected-to'], '(default exchange) / fixer');
    assert.equal(headers['replayed-by'], 'flow n1');
  });
});
