import assert from 'node:assert/strict';
import { RELAY_NUMBERS, relayProperties } from '../../../../src/nodes/outbox-relay/properties';
import { DEFAULT_OUTBOX_TABLE } from '../../../../src/nodes/shared/properties';

const fallbacks = Object.fromEntries(Object.entries(RELAY_NUMBERS).map(([key, field]) => [key, field.fallback]));

describe('outbox-relay properties', function () {
  it('a node saved without its properties: its numbers at their fallbacks, the default table, not ordered, sent rows kept', function () {
    assert.deepEqual(relayProperties({}), { postgres: '', table: DEFAULT_OUTBOX_TABLE, mode: 'declare', broker: '', numbers: fallbacks, ordered: false, deleteSent: false, problems: [] });
  });

  it('reads a node saved with its dialog (numbers as text)', function () {
    const read = relayProperties({ postgres: 'pg', broker: 'b', table: 'events', batchSize: '50', pollSeconds: '0.5', maxAttempts: '3', backoffSeconds: '2', backoffMaxSeconds: '60', retentionDays: '0', ordered: true, deleteSent: true });
    assert.deepEqual(read.numbers, { batchSize: 50, pollSeconds: 0.5, maxAttempts: 3, backoffSeconds: 2, backoffMaxSeconds: 60, retentionDays: 0 });
    assert.deepEqual([read.broker, read.postgres, read.table, read.ordered, read.deleteSent], ['b', 'pg', 'events', true, true]);
  });

  it('a bad number is a problem and reads as its fallback', function () {
    const read = relayProperties({ batchSize: '0', pollSeconds: 'soon' });
    assert.equal(read.numbers.batchSize, RELAY_NUMBERS.batchSize.fallback);
    assert.equal(read.numbers.pollSeconds, RELAY_NUMBERS.pollSeconds.fallback);
    assert.equal(read.problems.length, 2);
    assert.match(read.problems[0] ?? '', /batch/);
    assert.match(read.problems[1] ?? '', /poll every/);
  });
});
