import assert from 'node:assert/strict';
import { resolvePartitionRouting, type ExchangeTypeReader } from '../../../src/lib/topology/partition-routing';

describe('partitions: resolving auto routing', () => {
  const reader = (existing: string | undefined): ExchangeTypeReader => ({ exchangeType: () => Promise.resolve(existing) });

  it('keeps a chosen routing', async () => {
    assert.equal(await resolvePartitionRouting('computed', 'orders', reader('x-consistent-hash')), 'computed');
    assert.equal(await resolvePartitionRouting('consistent-hash', 'orders', undefined), 'consistent-hash');
  });

  it('is computed without a management API', async () => {
    assert.equal(await resolvePartitionRouting('auto', 'orders', undefined), 'computed');
  });

  it('follows the partition exchange that exists', async () => {
    assert.equal(await resolvePartitionRouting('auto', 'orders', reader('direct')), 'computed');
    assert.equal(await resolvePartitionRouting('auto', 'orders', reader('x-consistent-hash')), 'consistent-hash');
  });

  it('is computed for a new partition exchange, even where the broker offers the consistent-hash exchange (it spreads keys less evenly: issue 53)', async () => {
    const offered: ExchangeTypeReader & { exchangeTypes(): Promise<string[]> } = { exchangeType: () => Promise.resolve(undefined), exchangeTypes: () => Promise.resolve(['direct', 'x-consistent-hash']) };
    assert.equal(await resolvePartitionRouting('auto', 'orders', offered), 'computed');
    assert.equal(await resolvePartitionRouting('auto', 'orders', reader(undefined)), 'computed');
  });

  it('fails when the API does not answer (never guesses)', async () => {
    await assert.rejects(resolvePartitionRouting('auto', 'orders', { exchangeType: () => Promise.reject(new Error('down')) }), /down/);
  });
});
