import assert from 'node:assert/strict';
import type { MessageProperties } from 'amqplib';
import { foldReason, NO_REASON_KEY, reasonMatcher } from '../../src/lib/parking/fold';
import { GroupTally, MAX_GROUPS } from '../../src/lib/parking/groups';
import { describeParked, matchesSelection, parkedSummary, REPLAY_HEADER, selectionFrom } from '../../src/lib/parking/view';
import { oneAtATime } from '../../src/editor/nodes/parking-rows';

describe('park reasons folded into group keys', () => {
  const cases: Array<[string, string, string]> = [
    ['integers', 'amount 1200 is over the 1000 limit', 'amount {n} is over the {n} limit'],
    ['decimals and negative numbers', 'balance -12.5 below 0.01', 'balance {n} below {n}'],
    ['grouped thousands', 'amount 1,200,000.50 too high', 'amount {n} too high'],
    ['numbers written with spaces', 'limit is 1 000 000', 'limit is {n}'],
    ['amounts with a currency sign before', 'amount $1,200.50 is over €1000', 'amount {n} is over {n}'],
    ['amounts with a currency sign after', 'refund 99.90 € refused, 12 % fee', 'refund {n} refused, {n} fee'],
    ['hex ids', 'hash 5f3a9b2c1d and 0xDEADBEEF mismatch', 'hash {id} and {id} mismatch'],
    ['ids holding digits', 'order A17 of v2 failed', 'order {id} of {id} failed'],
    ['numbered ids after a dash', 'order-1234 failed', 'order-{n} failed'],
    ['UUIDs', 'customer 550e8400-e29b-41d4-a716-446655440000 unknown', 'customer {uuid} unknown'],
    ['ISO timestamps', 'expired at 2024-05-01T10:02:03.123Z (now 2024-05-02T00:00:00+02:00)', 'expired at {time} (now {time})'],
    ['dates and times of day', 'cut-off 2024-05-01 10:02 missed', 'cut-off {time} missed'],
    ['single-quoted values', "customer 'Bob Smith' not found", 'customer {s} not found'],
    ['double-quoted values', 'field "iban" is invalid', 'field {s} is invalid'],
    ['e-mail addresses', 'mail to bob.smith@example.com bounced', 'mail to {email} bounced'],
    ['units after numbers', 'timeout after 5000ms', 'timeout after {n}ms'],
    ['words stay', 'deadbeef facade delivery_limit', 'deadbeef facade delivery_limit'],
    ['whitespace collapsed', '  too   many\nretries  ', 'too many retries'],
  ];
  for (const [name, reason, key] of cases) {
    it(`folds ${name}`, () => assert.equal(foldReason(reason), key));
  }

  it('gives a missing reason a key of its own', () => {
    assert.equal(foldReason(null), NO_REASON_KEY);
    assert.equal(foldReason(undefined), NO_REASON_KEY);
    assert.notEqual(foldReason('none'), NO_REASON_KEY);
  });

  it('cuts a very long reason', () => {
    const key = foldReason('x'.repeat(5000));
    assert.equal(key.length, 300);
    assert.ok(key.endsWith('…'));
  });

  it('gives different reasons different keys', () => {
    assert.notEqual(foldReason('amount 12 is over the 10 limit'), foldReason('currency 12 is not supported'));
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

describe('groups of parked messages', () => {
  it('counts each group with its first and last park time, largest first', () => {
    const tally = new GroupTally();
    tally.add('amount 1200 is over the 1000 limit', '2026-01-01T10:05:00.000Z', 0);
    tally.add('customer 7 unknown', '2026-01-01T10:03:00.000Z', 0);
    tally.add('amount 99 is over the 50 limit', '2026-01-01T10:02:00.000Z', 2);
    tally.add('amount 5 is over the 1 limit', '2026-01-01T10:14:00.000Z', 0);
    tally.add(null, null, 0);
    assert.deepEqual(tally.list(), [
      { key: 'amount {n} is over the {n} limit', example: 'amount 1200 is over the 1000 limit', count: 3, firstAt: '2026-01-01T10:02:00.000Z', lastAt: '2026-01-01T10:14:00.000Z', replayed: 1 },
      { key: 'customer {n} unknown', example: 'customer 7 unknown', count: 1, firstAt: '2026-01-01T10:03:00.000Z', lastAt: '2026-01-01T10:03:00.000Z', replayed: 0 },
      { key: NO_REASON_KEY, example: null, count: 1, firstAt: null, lastAt: null, replayed: 0 },
    ]);
    assert.equal(tally.ungrouped, 0);
  });

  it('keeps at most MAX_GROUPS groups and counts the rest as ungrouped', () => {
    const tally = new GroupTally();
    // Words of letters that are no hex digits: distinct after folding.
    const word = (i: number): string => Array.from(i.toString(20), (d) => 'ghijklmnopqrstuvwxyz'.charAt(parseInt(d, 20))).join('');
    for (let i = 0; i < MAX_GROUPS + 5; i += 1) tally.add(`reason ${word(i)}`, null, 0);
    assert.equal(tally.list().length, MAX_GROUPS);
    assert.equal(tally.ungrouped, 5);
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

describe("the parking browser's reads, one at a time", () => {
  it('starts each read only after the one before finished, in the order asked', () => {
    const inTurn = oneAtATime();
    const log: string[] = [];
    const finish: Record<string, () => void> = {};
    for (const name of ['list', 'groups', 'body']) {
      inTurn((finished) => {
        log.push(`start ${name}`);
        finish[name] = finished;
      });
    }
    assert.deepEqual(log, ['start list']);
    finish.list!();
    assert.deepEqual(log, ['start list', 'start groups']);
    finish.groups!();
    finish.body!();
    // Idle again: the next one starts at once.
    inTurn(() => log.push('start replay'));
    assert.deepEqual(log, ['start list', 'start groups', 'start body', 'start replay']);
  });
});
