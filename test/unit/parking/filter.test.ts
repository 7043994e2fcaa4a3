import assert from 'node:assert/strict';
import { describeFilter, filterFrom, isEmptyFilter, matchesFilter, MAX_SEARCH_WINDOW, searchWindow } from '../../../src/lib/parking/filter';
import { matchesSelection, selectionFrom } from '../../../src/lib/parking/view';

describe('search of the parking queue (filter)', () => {
  const parked = { messageId: 'Order-42', reason: 'Payment gateway TIMEOUT after 30 s', parkedAt: '2026-11-28T05:30:00.000Z', originalRoutingKey: 'rk' };

  it('keeps a message parked within the time range, bounds included', () => {
    assert.equal(matchesFilter(parked, { from: '2026-11-28T05:00:00Z', to: '2026-11-28T06:00:00Z' }), true);
    assert.equal(matchesFilter(parked, { from: '2026-11-28T05:30:00Z' }), true);
    assert.equal(matchesFilter(parked, { to: '2026-11-28T05:30:00Z' }), true);
    assert.equal(matchesFilter(parked, { from: '2026-11-28T05:30:01Z' }), false);
    assert.equal(matchesFilter(parked, { to: '2026-11-28T05:29:59Z' }), false);
  });

  it('a message without a park time passes no time bound', () => {
    assert.equal(matchesFilter({ ...parked, parkedAt: null }, { from: '2026-01-01T00:00:00Z' }), false);
    assert.equal(matchesFilter({ ...parked, parkedAt: 'not a time' }, { to: '2027-01-01T00:00:00Z' }), false);
    assert.equal(matchesFilter({ ...parked, parkedAt: null }, {}), true);
  });

  it('reason and message id: a part of them, any case', () => {
    assert.equal(matchesFilter(parked, { reasonText: 'gateway timeout' }), true);
    assert.equal(matchesFilter(parked, { reasonText: 'card declined' }), false);
    assert.equal(matchesFilter(parked, { messageIdText: 'order-4' }), true);
    assert.equal(matchesFilter(parked, { messageIdText: 'order-43' }), false);
    assert.equal(matchesFilter({ ...parked, reason: null }, { reasonText: 'x' }), false);
    assert.equal(matchesFilter({ ...parked, messageId: null }, { messageIdText: 'x' }), false);
  });

  it('all given fields must match', () => {
    assert.equal(matchesFilter(parked, { reasonText: 'timeout', messageIdText: '42', from: '2026-11-28T05:00:00Z' }), true);
    assert.equal(matchesFilter(parked, { reasonText: 'timeout', messageIdText: '43' }), false);
  });

  it('reads a filter from plain fields and refuses what it cannot use', () => {
    assert.deepEqual(filterFrom({ reason: ' timeout ', messageId: '', from: undefined }), { reasonText: 'timeout' });
    assert.deepEqual(filterFrom({ from: '2026-11-28T05:00:00Z', to: '2026-11-28T06:00:00Z' }), { from: '2026-11-28T05:00:00Z', to: '2026-11-28T06:00:00Z' });
    assert.throws(() => filterFrom({ from: 'yesterday' }), /filter from must be a date and time/);
    assert.throws(() => filterFrom({ from: '2026-11-28T06:00:00Z', to: '2026-11-28T05:00:00Z' }), /is after to/);
    assert.throws(() => filterFrom({ reason: 42 }), /filter reasonText must be text/);
    assert.equal(isEmptyFilter(filterFrom({ reason: '' })), true);
  });

  it('a selection by filter selects only what the filter keeps; an empty filter is no filter', () => {
    const selection = selectionFrom({ filter: { reason: 'timeout', to: '2026-11-28T06:00:00Z' } });
    assert.equal(matchesSelection(parked, selection), true);
    assert.equal(matchesSelection({ ...parked, reason: 'card declined' }, selection), false);
    assert.deepEqual(selectionFrom({ filter: { reason: '' } }), {});
    assert.throws(() => selectionFrom({ filter: 'timeout' }), /msg.filter must be an object/);
  });

  it('the window is bounded: the asked one, else the default, never past the maximum', () => {
    assert.equal(searchWindow('200'), 200);
    assert.equal(searchWindow(undefined), 5000);
    assert.equal(searchWindow('lots'), 5000);
    assert.equal(searchWindow(10 ** 9), MAX_SEARCH_WINDOW);
    assert.equal(searchWindow(0), 5000);
  });

  it('says a filter in words', () => {
    assert.equal(describeFilter({}), 'every message');
    assert.equal(describeFilter({ reasonText: 'timeout', from: '2026-11-28T05:00:00Z' }), 'reason contains "timeout", parked 2026-11-28T05:00:00Z to …');
  });
});
