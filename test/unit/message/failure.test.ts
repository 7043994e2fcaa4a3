/** Failure metadata of parked messages: from msg.error to headers, through decide() and replay. */
import assert from 'node:assert/strict';
import type { MessageProperties } from 'amqplib';
import { decide, decisionPolicy, type Decision } from '../../../src/lib/settle/decide';
import { FAILURE_HEADERS, failureDetails, failureHeaders, FIRST_FAILURE_HEADER, firstFailureMs, truncateStack } from '../../../src/lib/message/failure';
import { describeParked } from '../../../src/lib/parking/view';
import { replayPublishOptions } from '../../../src/lib/parking/replay';
import type { RetryTopologyConfig } from '../../../src/lib/topology/plan';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const EARLIER = Date.parse('2026-11-23T11:00:00Z');

describe('failure metadata', () => {
  it('reads an Error thrown in a flow', () => {
    const err = new TypeError('cannot read amount');
    const details = failureDetails(err);
    assert.equal(details?.name, 'TypeError');
    assert.equal(details?.message, 'cannot read amount');
    assert.match(String(details?.stack), /^TypeError: cannot read amount\n/);
  });

  it("reads a Catch node's error object, naming the node that failed", () => {
    const caught = { message: 'RangeError: amount too large', source: { id: 'n1', type: 'function', name: 'process payment', count: 1 }, stack: 'RangeError: amount too large\n    at x' };
    assert.deepEqual(failureDetails(caught), {
      name: 'RangeError',
      message: 'RangeError: amount too large',
      stack: 'RangeError: amount too large\n    at x',
      source: { id: 'n1', type: 'function', name: 'process payment' },
    });
    assert.equal(failureDetails('just text'), undefined);
    assert.equal(failureDetails(undefined), undefined);
    assert.equal(failureDetails({}), undefined);
  });

  it('truncates long stacks and messages', () => {
    const stack = ['Error: x', ...Array.from({ length: 30 }, (_, i) => `    at f${i} (file.js:${i}:1)`)].join('\n');
    const short = truncateStack(stack);
    assert.equal(short.split('\n').length, 11);
    assert.match(short, /… 21 more lines$/);
    assert.ok(truncateStack('x'.repeat(5000)).length <= 2000);
    assert.equal(failureDetails({ message: 'm'.repeat(3000) })?.message?.length, 1000);
  });

  it('first failure: the package header, the first rejection, or now — the earliest', () => {
    assert.equal(firstFailureMs(undefined, 'q', NOW), NOW);
    assert.equal(firstFailureMs({ [FIRST_FAILURE_HEADER]: EARLIER }, 'q', NOW), EARLIER);
    const deaths = { 'x-death': [{ queue: 'q', reason: 'rejected', count: 2, exchange: '', 'routing-keys': ['q'], time: { '!': 'timestamp', value: EARLIER / 1000 } }] };
    assert.equal(firstFailureMs(deaths, 'q', NOW), EARLIER);
    assert.equal(firstFailureMs(deaths, 'other', NOW), NOW);
  });

  it('headers: times always, error fields when known', () => {
    assert.deepEqual(failureHeaders(undefined, EARLIER, NOW), {
      [FAILURE_HEADERS.firstFailure]: new Date(EARLIER).toISOString(),
      [FAILURE_HEADERS.lastFailure]: new Date(NOW).toISOString(),
    });
    const h = failureHeaders({ name: 'Error', message: 'boom', source: { id: 'n1' } }, NOW, NOW);
    assert.equal(h[FAILURE_HEADERS.errorName], 'Error');
    assert.equal(h[FAILURE_HEADERS.sourceId], 'n1');
    assert.equal(FAILURE_HEADERS.sourceType in h, false);
  });

  const topology = {
    mode: 'declare', mainExchange: 'ex', mainExchangeType: 'direct', mainQueue: 'q', routingKeys: ['rk'], retryExchange: '', retryExchangeType: 'fanout',
    retryQueue: 'q.retry', retryDelaysMs: [1000, 5000], parkingQueue: 'q.parking', maxAttempts: 3, maxAgeMs: 0,
    mainQueueArguments: {}, retryQueueArguments: {}, parkingQueueArguments: {},
  } as RetryTopologyConfig;
  const delivery = (attempt: number, headers: Record<string, unknown>) => ({
    message: { content: Buffer.from('{}'), properties: { headers } as unknown as MessageProperties, fields: { exchange: 'ex', routingKey: 'rk' } },
    retry: { attempt, maxAttempts: 3 },
    receivedAt: NOW,
  });
  const headersOf = (d: Decision): Record<string, unknown> => (d.kind === 'park' || d.kind === 'republish' ? (d.options.headers as Record<string, unknown>) : {});

  it('a retry carries the first failure time; the park writes it with the error, and replay drops it all', () => {
    const policy = decisionPolicy(topology, false);
    const retried = headersOf(decide(policy, delivery(1, {}), 'retry', 'boom', EARLIER));
    assert.equal(retried[FIRST_FAILURE_HEADER], EARLIER);
    const park = decide(policy, delivery(3, retried), 'retry', 'boom', NOW, { name: 'Error', message: 'boom', source: { id: 'n1', type: 'function' } });
    const headers = headersOf(park);
    assert.equal(headers[FAILURE_HEADERS.firstFailure], new Date(EARLIER).toISOString());
    assert.equal(headers[FAILURE_HEADERS.lastFailure], new Date(NOW).toISOString());
    assert.equal(headers[FAILURE_HEADERS.errorMessage], 'boom');
    assert.equal(headers[FAILURE_HEADERS.sourceType], 'function');
    const view = describeParked({ content: Buffer.from('{}'), properties: { headers } as unknown as MessageProperties }, 0, 10);
    assert.equal(view.firstFailureAt, new Date(EARLIER).toISOString());
    assert.deepEqual(view.error, { name: 'Error', message: 'boom', stack: null, source: { id: 'n1', type: 'function', name: null } });
    const replayed = replayPublishOptions({ headers } as unknown as MessageProperties, true).headers ?? {};
    assert.deepEqual(Object.keys(replayed).filter((k) => k.startsWith('park-') || k.startsWith('retry-')), ['park-replayed']);
  });
});
