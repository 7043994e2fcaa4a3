import assert from 'node:assert/strict';
import { resolvePartitionRouting, type ExchangeTypeReader } from '../../../src/lib/topology/partition-routing';

describe('partitions: resolving auto routing', () => {
  const reader = (existing: string | undefined, types: string[]): ExchangeTypeReader => ({ exchangeType: () => Promise.resolve(existing), exchangeTypes: () => Promise.resolve(types) });

  it('keeps a chosen routing', async () => {
    assert.equal(await resolvePartitionRouting('computed', 'orders', reader('x-consistent-hash', [])), 'computed');
    assert.equal(await resolvePartitionRouting('consistent-hash', 'orders', undefined), 'consistent-hash');
  });

  it('is computed without a management API', async () => {
    assert.equal(await resolvePartitionRouting('auto', 'orders', undefined), 'computed');
  });

  it('follows the partition exchange that exists', async () => {
    assert.equal(await resolvePartitionRouting('auto', 'orders', reader('direct', ['x-consistent-hash'])), 'computed');
    assert.equal(await resolvePartitionRouting('auto', 'orders', reader('x-consistent-hash', [])), 'consistent-hash');
  });

  it('takes the consistent-hash exchange when the broker offers it', async () => {
    assert.equal(await resolvePartitionRouting('auto', 'orders', reader(undefined, ['direct', 'x-consistent-hash'])), 'consistent-hash');
    assert.equal(await resolvePartitionRouting('auto', 'orders', reader(undefined, ['direct', 'topic'])), 'computed');
  });

  it('fails when the API does not answer (never guesses)', async () => {
    await assert.rejects(resolvePartitionRouting('auto', 'orders', { exchangeType: () => Promise.reject(new Error('down')), exchangeTypes: () => Promise.resolve([]) }), /down/);
  });
});
