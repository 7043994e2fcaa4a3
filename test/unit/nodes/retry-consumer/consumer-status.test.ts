/**
 * The consumer's side of issue 26, without a broker: which settles the kill switch counts, the rate
 * limit's holding (handed on in turn, back to the queue on a pause, forgotten with its channel), the
 * status lines and the circuit gauge.
 */
import assert from 'node:assert/strict';
import type { BrokerCancel, CircuitView } from '../../../../src/lib/consume';
import { sessionStatus, statsText } from '../../../../src/nodes/retry-consumer/consumer-status';

describe('the consumer status with the kill switch and the rate limit', () => {
  const t = (key: string, args: Record<string, unknown> = {}): string => {
    const texts: Record<string, string> = {
      'retry-consumer.status.stats': '__duplicates__✓__acked__ ↻__retried__ ⚑__parked__ · __inFlight__ in flight',
      'retry-consumer.status.circuitOpen': 'circuit open · probe in __seconds__ s',
      'retry-consumer.status.circuitProbing': 'circuit probing · __probed__/__probes__',
      'retry-consumer.status.rateLimited': 'rate-limited · __rate__/s · ',
    };
    return (texts[key] ?? key).replace(/__(\w+)__/g, (_m, name: string) => String(args[name]));
  };
  const stats = { inFlight: 2, delivered: 5, acked: 3, retried: 0, parked: 0, duplicates: 0, waiting: 0 };
  const view = (state: CircuitView['state'], extra: Partial<CircuitView> = {}): CircuitView => ({ state, probeInMs: 0, probed: 0, probes: 5, ...extra });
  const context = { blockedBy: undefined, store: '', rateLimit: 0 };

  it('open: the seconds to the probe (yellow); probing: the successes so far (yellow)', () => {
    assert.deepEqual(sessionStatus({ phase: 'circuit-open' }, stats, t, { ...context, circuit: view('open', { probeInMs: 44_200 }) }), {
      fill: 'yellow',
      shape: 'ring',
      text: 'circuit open · probe in 45 s',
    });
    assert.deepEqual(sessionStatus({ phase: 'consuming' }, stats, t, { ...context, circuit: view('probing', { probed: 2 }) }), {
      fill: 'yellow',
      shape: 'dot',
      text: 'circuit probing · 2/5',
    });
    assert.equal(sessionStatus({ phase: 'consuming' }, stats, t, { ...context, circuit: view('closed') })?.fill, 'green');
  });

  it('says it holds messages back, before the counts, only while it does', () => {
    assert.equal(statsText({ ...stats, rateLimited: 4 }, t, 10), 'rate-limited · 10/s · ✓3 ↻0 ⚑0 · 2 in flight');
    assert.equal(statsText(stats, t, 10), '✓3 ↻0 ⚑0 · 2 in flight');
  });

  it("a store whose table is missing or wrong: a table problem, not a store down (red)", () => {
    const store = 'postgres app@db/test table "orders_dedupe"';
    const down = (storeProblem?: 'schema' | 'unreachable'): string | undefined =>
      sessionStatus({ phase: 'store-down', detail: 'why', ...(storeProblem ? { storeProblem } : {}) }, stats, t, { ...context, store, circuit: undefined })?.text;
    assert.equal(down('schema'), `retry-consumer.status.storeTable`);
    assert.equal(down('unreachable'), 'retry-consumer.status.storeDown');
    assert.equal(down(), 'retry-consumer.status.storeDown');
    assert.equal(sessionStatus({ phase: 'store-down', storeProblem: 'schema' }, stats, t, { ...context, store, circuit: undefined })?.fill, 'red');
  });

  it('a consumer the broker cancelled: the cause (issue 52, item 4) — red while its queue is deleted, yellow for a timeout (with its value) or a leader move', () => {
    const status = (cancelled: BrokerCancel) => sessionStatus({ phase: 'channel-lost', detail: 'why', cancelled }, stats, (key, args) => `${key} ${JSON.stringify(args ?? {})}`, { ...context, circuit: undefined });
    const key = (name: string): string => `node-red-contrib-rabbitmq-retry/retry-consumer:retry-consumer.status.${name}`;
    assert.deepEqual(status({ cause: 'deleted' }), { fill: 'red', shape: 'ring', text: key('cancelledDeleted') });
    assert.deepEqual(status({ cause: 'consumer-timeout', timeoutMs: 1500 }), { fill: 'yellow', shape: 'ring', text: 'retry-consumer.status.cancelledTimeout {"timeout":"1500ms"}' });
    assert.deepEqual(status({ cause: 'consumer-timeout', timeoutMs: 1_800_000 })?.text, 'retry-consumer.status.cancelledTimeout {"timeout":"30m"}');
    assert.deepEqual(status({ cause: 'consumer-timeout' }), { fill: 'yellow', shape: 'ring', text: key('cancelledTimeoutDefault') });
    assert.deepEqual(status({ cause: 'leader-moved' }), { fill: 'yellow', shape: 'ring', text: key('cancelledLeader') });
    assert.deepEqual(status({ cause: 'unknown' }), { fill: 'yellow', shape: 'ring', text: key('cancelled') });
  });
});
