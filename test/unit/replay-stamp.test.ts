import assert from 'node:assert/strict';
import type { MessageProperties } from 'amqplib';
import { replayPublishOptions, REPLAY_HEADER } from '../../src/lib/parking/replay';

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
