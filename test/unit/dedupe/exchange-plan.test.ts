/** What one store call carries: a claim never passes a write of its key (pure). */
import assert from 'node:assert/strict';
import { planExchange } from '../../../src/lib/dedupe/exchange-plan';

const c = (key: string, n = 0): { key: string; n: number } => ({ key, n });

describe('dedupe exchange plan', () => {
  it('claims go with the writes of other keys, in order', () => {
    const plan = planExchange([c('a'), c('b'), c('a', 1)], ['x'], ['y'], new Set());
    assert.deepEqual(plan, { claims: [c('a'), c('b'), c('a', 1)], deferred: [], releases: ['y'] });
  });

  it('a claim of a key written in the same call waits for the next call', () => {
    const plan = planExchange([c('a'), c('k'), c('b'), c('r')], ['k'], ['r'], new Set());
    assert.deepEqual(plan.claims, [c('a'), c('b')]);
    assert.deepEqual(plan.deferred, [c('k'), c('r')]);
  });

  it('a claim of a key whose write is still in flight waits (a map of counts or a set)', () => {
    assert.deepEqual(planExchange([c('a'), c('w')], [], [], new Map([['w', 1]])).deferred, [c('w')]);
    assert.deepEqual(planExchange([c('a'), c('w')], [], [], new Set(['w'])).claims, [c('a')]);
  });

  it('a release of a key completed in the same call is dropped (both orders leave it done)', () => {
    assert.deepEqual(planExchange([], ['k', 'x'], ['k', 'r'], new Set()).releases, ['r']);
  });

  it('nothing to claim: only the writes', () => {
    assert.deepEqual(planExchange([], [], ['r'], new Set(['r'])), { claims: [], deferred: [], releases: ['r'] });
  });
});
