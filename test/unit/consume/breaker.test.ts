/**
 * The consumer's side of issue 26, without a broker: which settles the kill switch counts, the rate
 * limit's holding (handed on in turn, back to the queue on a pause, forgotten with its channel), the
 * status lines and the circuit gauge.
 */
import assert from 'node:assert/strict';
import { downstreamFailed, type Settled } from '../../../src/lib/consume';

function settled(done: 'acked' | 'retried' | 'parked' | 'duplicate', kind?: Settled['kind']): Settled {
  return { outcome: { done, attempt: 1 }, reason: '', messageId: null, durationMs: 1, ...(kind ? { kind } : {}) };
}

describe('what the kill switch counts', () => {
  it('a transient failure counts as a failure, done and a plain ack as a success; permanent, parks and duplicates not at all', () => {
    assert.equal(downstreamFailed(settled('retried', 'transient')), true);
    assert.equal(downstreamFailed(settled('parked', 'transient')), true, 'a retry on its last attempt parks: still the downstream failing');
    assert.equal(downstreamFailed(settled('acked', 'done')), false);
    assert.equal(downstreamFailed(settled('parked', 'permanent')), undefined);
    assert.equal(downstreamFailed(settled('acked')), false);
    assert.equal(downstreamFailed(settled('retried')), true, 'without error rules a retry is transient');
    assert.equal(downstreamFailed(settled('parked')), undefined, 'park-publisher, an invalid body');
    assert.equal(downstreamFailed(settled('duplicate')), undefined);
  });
});
