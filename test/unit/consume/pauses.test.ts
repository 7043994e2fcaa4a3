/** The parts a ConsumerSession owns, each on its own: why it pauses, its setups' re-checks, its channel. */
import assert from 'node:assert/strict';
import { Pauses } from '../../../src/lib/consume/pauses';

describe('Pauses', () => {
  it('consuming without a reason; a reason added twice counts once, removed once', () => {
    const pauses = new Pauses();
    assert.equal(pauses.any, false);
    assert.deepEqual(pauses.state(undefined), { phase: 'consuming' });
    assert.equal(pauses.add('user'), true);
    assert.equal(pauses.add('user'), false);
    assert.equal(pauses.any, true);
    assert.equal(pauses.remove('user'), true);
    assert.equal(pauses.remove('user'), false);
    assert.equal(pauses.any, false);
  });

  it('the reasons add up: paused until none is left', () => {
    const pauses = new Pauses();
    pauses.add('circuit');
    pauses.add('user');
    pauses.remove('circuit');
    assert.equal(pauses.any, true);
    assert.equal(pauses.has('user'), true);
    assert.equal(pauses.has('circuit'), false);
  });

  it('says the store first (with why it is down), then the user, then the kill switch', () => {
    const pauses = new Pauses();
    pauses.add('circuit');
    assert.deepEqual(pauses.state('ignored'), { phase: 'circuit-open' });
    pauses.add('user');
    assert.deepEqual(pauses.state(undefined), { phase: 'paused', detail: 'paused' });
    pauses.add('store');
    assert.deepEqual(pauses.state('ECONNREFUSED'), { phase: 'store-down', detail: 'ECONNREFUSED' });
    assert.deepEqual(pauses.state(undefined), { phase: 'store-down', detail: 'deduplication store down' });
    // What is wrong with the store goes with it: its table (`schema`) is not a store down.
    assert.deepEqual(pauses.state('no table', 'schema'), { phase: 'store-down', detail: 'no table', storeProblem: 'schema' });
  });

  it('standing by (another instance holds the partition) says so last: the kill switch, the user and the store before it', () => {
    const pauses = new Pauses();
    pauses.add('standby');
    assert.deepEqual(pauses.state(undefined), { phase: 'paused', detail: 'standby' });
    pauses.add('circuit');
    assert.deepEqual(pauses.state(undefined), { phase: 'circuit-open' });
    pauses.add('user');
    assert.deepEqual(pauses.state(undefined), { phase: 'paused', detail: 'paused' });
    pauses.remove('user');
    pauses.remove('circuit');
    pauses.remove('standby');
    assert.deepEqual(pauses.state(undefined), { phase: 'consuming' });
  });
});
