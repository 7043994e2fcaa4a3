import assert from 'node:assert/strict';
import type { MessageProperties } from 'amqplib';
import { describeParked, matchesSelection, peekHazard, plainValue, selectionFrom, parkedSummary, REPLAY_HEADER } from '../../../src/lib/parking/view';
import { parkHeaders } from '../fixtures/parked';
import { cycle3 } from '../fixtures/x-death';
import { NO_REASON_KEY, reasonMatcher } from '../../../src/lib/parking/fold';

describe('parked messages as plain data', () => {
  const properties = {
    messageId: 'm-1',
    contentType: 'application/json',
    headers: {
      ...parkHeaders,
      raw: Buffer.from('bytes'),
      ...cycle3['3.10.8'],
    },
  } as unknown as MessageProperties;

  it('reads the park headers and makes the headers JSON-safe', () => {
    const parked = describeParked({ content: Buffer.from('{"amount":210.23}'), properties }, 4, 1024);
    assert.equal(parked.position, 4);
    assert.equal(parked.messageId, 'm-1');
    assert.equal(parked.correlationId, null);
    assert.equal(parked.reason, 'max attempts (3) reached');
    assert.equal(parked.attempts, 3);
    assert.equal(parked.originalRoutingKey, 'srvc.transact.cash');
    assert.equal(parked.preview, '{"amount":210.23}');
    assert.equal(parked.headers.raw, 'bytes');
    const death = (parked.headers['x-death'] as Array<Record<string, unknown>>)[1]!;
    assert.equal(death.time, new Date(1795324063 * 1000).toISOString());
    assert.doesNotThrow(() => JSON.stringify(parked));
  });

  it('falls back to the broker record for a message the broker dead-lettered (quorum delivery limit)', () => {
    const headers = { 'x-death': [{ queue: 'main-queue', reason: 'delivery_limit', count: 1, exchange: 'main-exchange', 'routing-keys': ['rk'], time: { '!': 'timestamp', value: 1 } }] };
    const parked = describeParked({ content: Buffer.alloc(0), properties: { headers } as unknown as MessageProperties }, 0, 10);
    assert.equal(parked.reason, 'delivery_limit');
    assert.equal(parked.parkedAt, '1970-01-01T00:00:01.000Z');
    assert.equal(parked.originalExchange, 'main-exchange');
    assert.equal(parked.originalRoutingKey, 'rk');
    assert.equal(parked.attempts, 0);
  });

  it('previews text up to the limit without a cut character, binary as base64', () => {
    const text = describeParked({ content: Buffer.from('ab€cd'), properties: {} as MessageProperties }, 0, 3);
    assert.deepEqual([text.preview, text.previewEncoding, text.truncated, text.size], ['ab', 'utf8', true, 7]);
    const binary = describeParked({ content: Buffer.from([0, 1, 2, 255]), properties: {} as MessageProperties }, 0, 10);
    assert.deepEqual([binary.preview, binary.previewEncoding, binary.truncated], ['AAEC/w==', 'base64', false]);
  });

  it('plain values: Buffers, Dates, bigints and wrapped AMQP values', () => {
    assert.deepEqual(plainValue({ a: [Buffer.from('x')], d: new Date(0), n: 5n, w: { '!': 'long', value: 7 } }), { a: ['x'], d: '1970-01-01T00:00:00.000Z', n: 5, w: 7 });
  });

  it('selects by messageId, routing key and reason (all must match); rejects a malformed selection', () => {
    const parked = { messageId: 'm-1', originalRoutingKey: 'rk', reason: 'Timeout at the bank' };
    assert.equal(matchesSelection(parked, {}), true);
    assert.equal(matchesSelection(parked, { messageIds: ['m-2', 'm-1'] }), true);
    assert.equal(matchesSelection(parked, { messageIds: ['m-2'] }), false);
    assert.equal(matchesSelection({ ...parked, messageId: null }, { messageIds: ['m-1'] }), false);
    assert.equal(matchesSelection(parked, { routingKey: 'rk', reason: 'timeout' }), true);
    assert.equal(matchesSelection(parked, { routingKey: 'rk', reason: 'card' }), false);
    assert.deepEqual(selectionFrom({ messageIds: 'm-1', reason: 'x', other: 1 }), { messageIds: ['m-1'], reason: 'x' });
    assert.throws(() => selectionFrom({ messageIds: [] }), /msg.messageIds must be/);
    assert.throws(() => selectionFrom({ messageIds: [1] }), /msg.messageIds must be/);
    assert.throws(() => selectionFrom({ routingKey: '' }), /msg.routingKey must be a non-empty string/);
  });

  it('peeking harms only a quorum parking queue with a delivery limit', () => {
    assert.equal(peekHazard('p', {}, '4.0.5'), undefined);
    assert.equal(peekHazard('p', { 'x-queue-type': 'quorum', 'x-delivery-limit': -1 }, '4.0.5'), undefined);
    assert.equal(peekHazard('p', { 'x-queue-type': 'quorum' }, '3.10.8'), undefined);
    assert.match(String(peekHazard('p', { 'x-queue-type': 'quorum' }, '4.0.5')), /delivery limit.*"x-delivery-limit": -1/);
    // -1 on RabbitMQ 3 is a limit that drops every message at once.
    assert.match(String(peekHazard('p', { 'x-queue-type': 'quorum', 'x-delivery-limit': -1 }, '3.10.8')), /no "x-delivery-limit"/);
    assert.match(String(peekHazard('p', { 'x-queue-type': 'quorum', 'x-delivery-limit': 5 }, '3.10.8')), /no "x-delivery-limit"/);
  });
});

describe('reason filter', () => {
  it('matches a case-insensitive part of the reason', () => {
    const match = reasonMatcher('OVER THE');
    assert.equal(match('amount 12 is over the 10 limit'), true);
    assert.equal(match('currency unknown'), false);
  });

  it('matches a /regular expression/ with its flags', () => {
    assert.equal(reasonMatcher('/^amount \\d+ is over/')('amount 12 is over the 10 limit'), true);
    assert.equal(reasonMatcher('/^AMOUNT/')('amount 12'), false);
    assert.equal(reasonMatcher('/^AMOUNT/i')('amount 12'), true);
    // A global flag would make test() remember where it stopped: it is dropped.
    const global = reasonMatcher('/a/g');
    assert.equal(global('a'), true);
    assert.equal(global('a'), true);
  });

  it('refuses an invalid regular expression', () => {
    assert.throws(() => reasonMatcher('/(unclosed/'), /not a valid regular expression/);
    assert.throws(() => selectionFrom({ reason: '/[/' }), /not a valid regular expression/);
  });

  it('selects by group (the folded reason) and by regular expression', () => {
    const parked = { messageId: 'm', originalRoutingKey: 'rk', reason: 'amount 1200 is over the 1000 limit' };
    assert.equal(matchesSelection(parked, selectionFrom({ group: 'amount {n} is over the {n} limit' })), true);
    assert.equal(matchesSelection(parked, selectionFrom({ group: 'amount {n} is over the limit' })), false);
    assert.equal(matchesSelection(parked, selectionFrom({ reason: '/over the \\d+ limit$/' })), true);
    assert.equal(matchesSelection({ ...parked, reason: null }, selectionFrom({ group: NO_REASON_KEY })), true);
    assert.throws(() => selectionFrom({ group: '' }), /msg.group must be a non-empty string/);
  });
});

describe('the replay counter on a parked message', () => {
  it('reads how often it was replayed, 0 when never', () => {
    const properties = (headers: Record<string, unknown>) => ({ headers }) as unknown as MessageProperties;
    assert.equal(describeParked({ content: Buffer.alloc(0), properties: properties({ [REPLAY_HEADER]: 2 }) }, 0, 0).replays, 2);
    assert.equal(describeParked({ content: Buffer.alloc(0), properties: properties({}) }, 0, 0).replays, 0);
    assert.equal(describeParked({ content: Buffer.alloc(0), properties: properties({ [REPLAY_HEADER]: 'x' }) }, 0, 0).replays, 0);
  });

  it('summarises a parked message for grouping from the park headers, else the broker record', () => {
    assert.deepEqual(parkedSummary({ 'park-reason': 'r', 'park-time': 't', [REPLAY_HEADER]: 1 }), { reason: 'r', parkedAt: 't', replays: 1 });
    const death = { 'x-death': [{ queue: 'q', reason: 'delivery_limit', count: 1, exchange: '', 'routing-keys': ['q'], time: { '!': 'timestamp', value: 1 } }] };
    assert.deepEqual(parkedSummary(death), { reason: 'delivery_limit', parkedAt: '1970-01-01T00:00:01.000Z', replays: 0 });
    assert.deepEqual(parkedSummary(undefined), { reason: null, parkedAt: null, replays: 0 });
  });
});
