/** The keys a gate holds and the copies waiting for them, on a lease schedule that only records. */
import assert from 'node:assert/strict';
import { LocalKeys, type LeaseWatch, type LocalKey } from '../../../src/lib/dedupe/local-keys';
import type { Admission } from '../../../src/lib/dedupe';

class Leases implements LeaseWatch {
  readonly due = new Map<string, number>();
  set(local: LocalKey, at: number): void {
    this.due.set(local.key, at);
  }
  delete(local: LocalKey): void {
    this.due.delete(local.key);
  }
}

function setup(): { leases: Leases; keys: LocalKeys; told: string[]; waiter: (name: string) => (a: Admission) => void } {
  const leases = new Leases();
  const told: string[] = [];
  return { leases, keys: new LocalKeys(leases), told, waiter: (name) => (a) => told.push(`${name} ${a}`) };
}

/** `key` held, granted until `until`, with `waiters` waiting (oldest first). */
function held(keys: LocalKeys, key: string, until: number, ...waiters: Array<(a: Admission) => void>): LocalKey {
  keys.add(key);
  const local = keys.get(key) as LocalKey;
  for (const waiter of waiters) keys.wait(local, waiter);
  keys.granted(key, until);
  return local;
}

describe('dedupe local keys', () => {
  it('makes a key no list of waiting copies until the first comes', () => {
    const { keys, waiter } = setup();
    keys.add('a');
    const local = keys.get('a');
    assert.ok(local);
    assert.equal(local.waiters, undefined);
    assert.equal(keys.waiting, 0);
    keys.wait(local, waiter('w1'));
    keys.wait(local, waiter('w2'));
    assert.equal(keys.get('a')?.waiters?.length, 2);
    assert.equal(keys.waiting, 2);
  });

  it('watches the lease of a key only once it is granted and copies wait', () => {
    const { keys, leases, waiter } = setup();
    keys.add('a');
    const local = keys.get('a') as LocalKey;
    keys.wait(local, waiter('w'));
    assert.equal(leases.due.size, 0, 'the claim is still asked for: no lease yet');
    keys.granted('a', 500);
    assert.equal(leases.due.get('a'), 500);
    keys.add('b');
    keys.granted('b', 700);
    assert.equal(leases.due.has('b'), false, 'no copy waits for b');
    keys.granted('gone', 1);
    assert.equal(keys.get('gone'), undefined);
  });

  it('hands the claim over to the oldest copy, whose lease starts anew', () => {
    const { keys, leases, waiter } = setup();
    const w1 = waiter('w1');
    const local = held(keys, 'a', 500, w1, waiter('w2'));
    assert.equal(keys.handOver(local), w1);
    assert.equal(local.until, Infinity);
    assert.equal(leases.due.has('a'), false);
    assert.equal(keys.waiting, 1);
  });

  it('hands over on a due lease only once it ended, and only for the key still held', () => {
    const { keys, leases, waiter } = setup();
    const w1 = waiter('w1');
    const local = held(keys, 'a', 500, w1);
    assert.equal(keys.due(local, 400), undefined);
    assert.equal(leases.due.get('a'), 500, 'looked at again when due');
    assert.equal(keys.due(local, 500), w1);
    keys.delete('a');
    keys.add('a');
    assert.equal(keys.due(local, 1000), undefined, 'a replaced entry is not looked at');
  });

  it('tells what waited when a key is finished, and forgets it', () => {
    const { keys, leases, told, waiter } = setup();
    held(keys, 'a', 500, waiter('w1'), waiter('w2'));
    keys.finish('a', 'duplicate');
    assert.deepEqual(told, ['w1 duplicate', 'w2 duplicate']);
    assert.equal(keys.get('a'), undefined);
    assert.equal(leases.due.size, 0);
    keys.finish('never', 'duplicate');
  });

  it('lets every copy go unchecked when admissions end, keeping the keys held', () => {
    const { keys, leases, told, waiter } = setup();
    keys.add('a');
    keys.add('b');
    const a = keys.get('a') as LocalKey;
    keys.wait(a, waiter('w1'));
    keys.letGo();
    assert.deepEqual(told, ['w1 unchecked']);
    assert.equal(keys.waiting, 0);
    assert.ok(keys.get('a') && keys.get('b'));
    keys.wait(a, waiter('late'));
    keys.granted('a', 500);
    assert.equal(leases.due.size, 0, 'nothing is looked at again');
    assert.equal(keys.handOver(a), undefined);
  });
});
