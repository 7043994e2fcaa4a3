import assert from 'node:assert/strict';
import type { HealthReport } from '../../../../src/lib/health';
import type { ConsumerHistory } from '../../../../src/lib/observe';
import { answer, groupRows, historyPoints, question, seriesOf, statusLine } from '../../../../src/nodes/retry-console/console-messages';

/** Names the key and its arguments, so each case shows what it asked the catalog for. */
const t = (key: string, args?: Record<string, unknown>): string => (args ? `${key} ${JSON.stringify(args)}` : key);

const series = (over: Partial<ConsumerHistory>): ConsumerHistory => ({
  consumer: 'c',
  config: 'cfg',
  queue: 'orders',
  open: true,
  start: 60_000,
  minutes: 2,
  acked: [0, 0],
  retried: [0, 0],
  parked: [0, 0],
  replayed: [0, 0],
  duplicates: [0, 0],
  depth: [null, null],
  ...over,
});

describe('retry-console messages', () => {
  it('turns parking groups into table rows: the key, one reason in full, times in UTC', () => {
    const rows = groupRows([
      { key: 'amount # is over the # limit', example: 'amount 210.23 is over the 100.00 limit', count: 2, firstAt: '2026-11-28T05:00:01.123Z', lastAt: '2026-11-28T05:10:00Z', replayed: 1 },
      { key: 'no reason', example: null, count: 1, firstAt: null, lastAt: null, replayed: 0 },
    ]);
    assert.deepEqual(rows, [
      { group: 'amount # is over the # limit', reason: 'amount 210.23 is over the 100.00 limit', count: 2, first: '2026-11-28 05:00:01 UTC', last: '2026-11-28 05:10:00 UTC', replayed: 1 },
      { group: 'no reason', reason: 'no reason', count: 1, first: '', last: '', replayed: 0 },
    ]);
  });

  it('sums the consumers minute by minute into chart points, leaving out depths nobody knew', () => {
    const points = historyPoints(
      [series({ retried: [1, 2], depth: [null, 3] }), series({ consumer: 'd', retried: [0, 5], depth: [null, 1] })],
      ['retried', 'depth'],
    );
    assert.deepEqual(points, [
      { time: 60_000, series: 'retried', value: 1 },
      { time: 120_000, series: 'retried', value: 7 },
      { time: 120_000, series: 'depth', value: 4 },
    ]);
    assert.deepEqual(historyPoints([], ['retried']), []);
  });

  it('chooses the series msg.series names, all of them when it names none it knows', () => {
    assert.deepEqual(seriesOf(['parked', 'retried', 'nonsense']), ['retried', 'parked']);
    assert.deepEqual(seriesOf('depth'), ['depth']);
    assert.deepEqual(seriesOf(undefined), ['acked', 'retried', 'parked', 'replayed', 'duplicates', 'depth']);
    assert.deepEqual(seriesOf(['nonsense']).length, 6);
  });

  it("says the report's status, then each consumer of the main queue with its kill switch", () => {
    const report = {
      ready: true,
      status: 'degraded',
      consumers: [
        { id: 'c1', name: 'payments', queue: 'orders', state: 'circuit-open', circuit: 'open', status: 'degraded', reason: 'kill switch open' },
        { id: 'c2', name: '', queue: 'orders', state: 'consuming', status: 'up' },
        { id: 'c3', name: 'other', queue: 'mail', state: 'consuming', status: 'up' },
      ],
    } as unknown as HealthReport;
    const line = statusLine(report, 'orders', t);
    assert.equal(line.text, 'retry-console.health.degraded — payments: kill switch open · retry-console.killSwitch {"state":"retry-console.circuit.open"} — c2: consuming · retry-console.killSwitchOff');
    assert.deepEqual(line.consumers.map((c) => c.id), ['c1', 'c2']);
    assert.equal(statusLine({ ...report, status: 'not ready', consumers: [] }, 'orders', t).text, 'retry-console.health.notReady — retry-console.noConsumer');
  });

  it('asks about a group by its reason and count, or about the whole queue; says what was done', () => {
    const row = { group: 'k', reason: 'amount 210.23 is over', count: 2, first: '', last: '', replayed: 0 };
    assert.equal(question('replay', row, 'q.parking', t), 'retry-console.ask.replayGroup {"count":2,"key":"amount 210.23 is over","queue":"q.parking"}');
    assert.equal(question('purge', { ...row, count: NaN }, 'q.parking', t), 'retry-console.ask.purgeGroupAny {"key":"amount 210.23 is over","queue":"q.parking"}');
    assert.equal(question('purge', undefined, 'q.parking', t), 'retry-console.ask.purgeAll {"queue":"q.parking"}');
    assert.equal(answer('replay', { replayed: 2, remaining: 1 }, t), 'retry-console.done.replay {"count":2,"left":1}');
    assert.equal(answer('purge', { purged: 3, remaining: 0 }, t), 'retry-console.done.purge {"count":3,"left":0}');
  });
});
