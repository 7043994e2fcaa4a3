/** A config node's users: its status pushed to every one, and its resource closed once they are gone. */
import assert from 'node:assert/strict';
import type { NodeStatus } from '../../../../src/nodes/shared/node-red';
import { ConfigUsers, type ConfigUser } from '../../../../src/nodes/shared/users';

function user(id: string): ConfigUser & { shown: NodeStatus[] } {
  const shown: NodeStatus[] = [];
  return { id, shown, status: (status) => shown.push(status) };
}

describe('ConfigUsers', () => {
  it('pushes a status to every user registered, not to one that left', () => {
    const users = new ConfigUsers();
    const [a, b] = [user('a'), user('b')];
    users.add(a);
    users.add(b);
    users.broadcast({ fill: 'green', text: 'up' });
    users.remove(a);
    users.broadcast({ fill: 'red', text: 'down' });
    assert.deepEqual(a.shown, [{ fill: 'green', text: 'up' }]);
    assert.deepEqual(b.shown, [{ fill: 'green', text: 'up' }, { fill: 'red', text: 'down' }]);
    assert.equal(users.size, 1);
  });

  it('keeps one entry per node id: a node registering again replaces itself', () => {
    const users = new ConfigUsers();
    const [first, again] = [user('a'), user('a')];
    users.add(first);
    users.add(again);
    users.broadcast({ text: 'x' });
    assert.equal(users.size, 1);
    assert.deepEqual(first.shown, []);
    assert.deepEqual(again.shown, [{ text: 'x' }]);
  });

  it('is unused at once without users, and once the last one leaves', async () => {
    const users = new ConfigUsers();
    await users.whenUnused();
    const [a, b] = [user('a'), user('b')];
    users.add(a);
    users.add(b);
    let unused = false;
    const done = users.whenUnused(60_000).then(() => (unused = true));
    users.remove(a);
    await Promise.resolve();
    assert.equal(unused, false, 'b still uses it');
    users.remove(b);
    await done;
    assert.equal(unused, true);
  });

  it('stops waiting for users that never leave after the wait', async () => {
    const users = new ConfigUsers();
    users.add(user('stays'));
    await users.whenUnused(5);
    assert.equal(users.size, 1);
  });
});
