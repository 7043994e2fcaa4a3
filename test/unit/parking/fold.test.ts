import assert from 'node:assert/strict';
import { foldReason, NO_REASON_KEY } from '../../../src/lib/parking/fold';

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
