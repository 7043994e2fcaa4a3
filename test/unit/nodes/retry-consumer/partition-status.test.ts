/** A partitioned consumer's status line: the urgent partition first, else how many are active here and the counts of all. */
import assert from 'node:assert/strict';
import type { SessionState, SessionStats } from '../../../../src/lib/consume';
import { partitionsStatus, sumStats, type PartitionView } from '../../../../src/nodes/retry-consumer/partition-status';
import { translator } from '../../../../src/nodes/shared/i18n';

/** The runtime's RED._ with the package's English catalog. */
const t = translator({
  _: (key: string, args?: Record<string, unknown>) => {
    const [set, path] = key.split('/')[1]!.split(':') as [string, string];
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- catalogs are JSON files
    const catalog = require(`../../../../src/nodes/${set}/locales/en-US/${set}.json`) as Record<string, unknown>;
    const text = path.split('.').reduce<unknown>((o, part) => (o as Record<string, unknown> | undefined)?.[part], catalog);
    return typeof text === 'string' ? text.replace(/__(\w+)__/g, (_m, name: string) => String(args?.[name])) : key;
  },
});

const stats = (acked: number, extra: Partial<SessionStats> = {}): SessionStats => ({ inFlight: 0, delivered: acked, acked, retried: 0, parked: 0, duplicates: 0, waiting: 0, ...extra });
const part = (index: number, phase: SessionState['phase'], active: boolean, extra: Partial<PartitionView> = {}): PartitionView => ({
  index,
  state: { phase },
  stats: stats(10),
  status: phase === 'consuming' ? { fill: 'green', shape: 'dot', text: 'ok' } : undefined,
  active,
  ...extra,
});

describe('partitioned consumer status', () => {
  it('says how many partitions are active here, with the counts of all', () => {
    const status = partitionsStatus([part(0, 'consuming', true), part(1, 'consuming', false), part(2, 'consuming', true), part(3, 'consuming', false)], t);
    assert.deepEqual(status, { fill: 'green', shape: 'dot', text: '2/4 partitions active here · ✓40 ↻0 ⚑0 · 0 in flight' });
  });

  it('names the first failing partition before anything else', () => {
    const failing = part(2, 'topology-error', false, { status: { fill: 'red', shape: 'ring', text: "topology check failed: missing queue 'q.2'" } });
    const blocked = part(1, 'blocked', true, { status: { fill: 'yellow', shape: 'dot', text: 'blocked since 2026-11-28T05:00:00.000Z, attempt 2' } });
    assert.deepEqual(partitionsStatus([part(0, 'consuming', true), blocked, failing], t), { fill: 'red', shape: 'ring', text: "partition 2: topology check failed: missing queue 'q.2'" });
    assert.deepEqual(partitionsStatus([part(0, 'consuming', true), blocked], t), { fill: 'yellow', shape: 'dot', text: 'partition 1: blocked since 2026-11-28T05:00:00.000Z, attempt 2' });
  });

  it('is yellow while a partition has no channel yet, grey when all are paused, and leaves the broker status while none has a channel', () => {
    assert.equal(partitionsStatus([part(0, 'consuming', true), part(1, 'checking-topology', false, { status: { fill: 'yellow', shape: 'ring', text: 'checking' } })], t)?.fill, 'yellow');
    assert.equal(partitionsStatus([part(0, 'paused', false), part(1, 'paused', false)], t)?.fill, 'grey');
    assert.equal(partitionsStatus([part(0, 'waiting-for-connection', false), part(1, 'waiting-for-connection', false)], t), undefined);
  });

  it('sums the counts; the parking depth is the shared queue’s', () => {
    const sum = sumStats([stats(3, { parkingDepth: 2, inFlight: 1 }), stats(4, { parkingDepth: 2, duplicates: 1 })]);
    assert.deepEqual(sum, { inFlight: 1, delivered: 7, acked: 7, retried: 0, parked: 0, duplicates: 1, waiting: 0, parkingDepth: 2 });
  });
});
