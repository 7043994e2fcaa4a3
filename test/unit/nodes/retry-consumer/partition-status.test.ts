/** A partitioned consumer's status line: the urgent partition first, else on how many it is active (its share) and the counts of all. */
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
const part = (index: number, phase: SessionState['phase'], extra: Partial<PartitionView> = {}): PartitionView => ({
  index,
  state: { phase },
  stats: stats(10),
  status: phase === 'consuming' ? { fill: 'green', shape: 'dot', text: 'ok' } : undefined,
  ...extra,
});
/** A partition another instance holds: standing by, no consumer here. */
const standby = (index: number): PartitionView => part(index, 'paused', { state: { phase: 'paused', detail: 'standby' } });

describe('partitioned consumer status', () => {
  it('says on how many partitions it is active (its share; the others stand by), with the counts of all', () => {
    const status = partitionsStatus([part(0, 'consuming'), standby(1), part(2, 'consuming'), standby(3)], t);
    assert.deepEqual(status, { fill: 'green', shape: 'dot', text: 'active on 2 of 4 partitions · ✓40 ↻0 ⚑0 · 0 in flight' });
  });

  it('standing by on every partition (more instances than partitions, or its share not known yet) is not paused', () => {
    assert.deepEqual(partitionsStatus([standby(0), standby(1)], t), { fill: 'green', shape: 'dot', text: 'active on 0 of 2 partitions · ✓20 ↻0 ⚑0 · 0 in flight' });
    assert.equal(partitionsStatus([part(0, 'paused'), standby(1)], t)?.fill, 'grey');
  });

  it('names the first failing partition before anything else', () => {
    const failing = part(2, 'topology-error', { status: { fill: 'red', shape: 'ring', text: "topology check failed: missing queue 'q.2'" } });
    const blocked = part(1, 'blocked', { status: { fill: 'yellow', shape: 'dot', text: 'blocked since 2026-11-28T05:00:00.000Z, attempt 2' } });
    assert.deepEqual(partitionsStatus([part(0, 'consuming'), blocked, failing], t), { fill: 'red', shape: 'ring', text: "partition 2: topology check failed: missing queue 'q.2'" });
    assert.deepEqual(partitionsStatus([part(0, 'consuming'), blocked], t), { fill: 'yellow', shape: 'dot', text: 'partition 1: blocked since 2026-11-28T05:00:00.000Z, attempt 2' });
  });

  it('is yellow while a partition has no channel yet, grey when all are paused, and leaves the broker status while none has a channel', () => {
    assert.equal(partitionsStatus([part(0, 'consuming'), part(1, 'checking-topology', { status: { fill: 'yellow', shape: 'ring', text: 'checking' } })], t)?.fill, 'yellow');
    assert.equal(partitionsStatus([part(0, 'paused'), part(1, 'paused')], t)?.fill, 'grey');
    assert.equal(partitionsStatus([part(0, 'waiting-for-connection'), part(1, 'waiting-for-connection')], t), undefined);
  });

  it('sums the counts; the parking depth is the shared queue’s', () => {
    const sum = sumStats([stats(3, { parkingDepth: 2, inFlight: 1 }), stats(4, { parkingDepth: 2, duplicates: 1 })]);
    assert.deepEqual(sum, { inFlight: 1, delivered: 7, acked: 7, retried: 0, parked: 0, duplicates: 1, waiting: 0, parkingDepth: 2 });
  });
});
