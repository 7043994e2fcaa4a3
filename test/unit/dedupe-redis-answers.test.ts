import { strict as assert } from 'node:assert';
import { answers } from '../../src/lib/dedupe/redis-store';

// The Redis claim script's reply: a letter per distinct key, with held keys an array of the letters and their details.
describe('Redis claim answers', () => {
  it('reads a letter per key: claimed and done', () => {
    assert.deepEqual(answers('cdc', undefined), [{ state: 'claimed' }, { state: 'done' }, { state: 'claimed' }]);
    assert.deepEqual(answers('', undefined), []);
  });

  it('reads each held key its details in order (an owner may hold colons)', () => {
    const before = Date.now();
    const results = answers(['chdh', '5000:host/1/ab', '20:a:b'], undefined);
    assert.deepEqual(
      results.map((r) => r.state),
      ['claimed', 'held', 'done', 'held'],
    );
    const [, first, , second] = results;
    assert.equal(first?.state === 'held' && first.owner, 'host/1/ab');
    assert.ok(first?.state === 'held' && first.until >= before + 5000 && first.until <= Date.now() + 5000);
    assert.equal(second?.state === 'held' && second.owner, 'a:b');
    assert.ok(second?.state === 'held' && second.until >= before + 20);
  });

  it('a held key whose lease is already over is held until now, not before', () => {
    const before = Date.now();
    const [held] = answers(['h', '-2:x'], undefined);
    assert.ok(held?.state === 'held' && held.until >= before && held.until <= Date.now());
  });

  it('maps the answers back to keys asked twice', () => {
    assert.deepEqual(
      answers('cd', [0, 1, 0]).map((r) => r.state),
      ['claimed', 'done', 'claimed'],
    );
  });
});
