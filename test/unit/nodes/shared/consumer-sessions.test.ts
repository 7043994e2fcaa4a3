import assert from 'node:assert/strict';
import type { ConsumerSession } from '../../../../src/lib/consume';
import { ConsumerSessions, deliveryTarget, targetFinder } from '../../../../src/nodes/shared/consumer-sessions';
import type { NodeAPI } from '../../../../src/nodes/shared/node-red';

/** A session as `issuer` sees it: the ids it gave out, and how often it was asked. */
function fakeSession(prefix: string): { session: ConsumerSession; asked: () => number } {
  let asked = 0;
  const settles = {
    issued: (id: string): boolean => {
      asked += 1;
      return id.startsWith(`${prefix}:`);
    },
  };
  return { session: { settles } as unknown as ConsumerSession, asked: () => asked };
}

describe('consumer sessions: the session that issued a delivery id', () => {
  it('finds the issuing session among several', () => {
    const sessions = new ConsumerSessions();
    const a = fakeSession('a');
    const b = fakeSession('b');
    sessions.add(a.session, 'node-a');
    sessions.add(b.session, 'node-b');
    assert.equal(sessions.issuer('b:1'), b.session);
    assert.equal(sessions.issuer('b:1'), b.session);
    assert.equal(sessions.issuer('a:7'), a.session);
    assert.equal(sessions.issuer('b:2'), b.session);
    assert.equal(sessions.issuer('c:1'), undefined);
    assert.equal(sessions.issuer('c:1'), undefined, 'an id nobody issued stays unknown when asked again');
  });

  it('never answers with a session that was removed, even for the id it answered last', () => {
    const sessions = new ConsumerSessions();
    const a = fakeSession('a');
    const remove = sessions.add(a.session, 'node-a');
    assert.equal(sessions.issuer('a:1'), a.session);
    remove();
    assert.equal(sessions.issuer('a:1'), undefined);
  });

  it("a settle's target: the session that issued the id, asked once per settle; another configuration's or an unknown id has none", () => {
    const sessions = new ConsumerSessions();
    const a = fakeSession('a');
    sessions.add(a.session, 'node-a');
    const config = { id: 'cfg', type: 'retry-config', consumers: sessions };
    const RED = {
      nodes: {
        getNode: (id: string) => (id === 'cfg' ? config : null),
        eachNode: (visit: (def: { id: string; type: string }) => void) => visit(config),
      },
    } as unknown as NodeAPI;
    const find = targetFinder(RED);
    const msg = (deliveryId: string, configId?: string) => ({ _msgid: 'm', amqp: { deliveryId, config: configId } });
    for (const [i, configId] of [['1', 'cfg'], ['2', 'cfg'], ['3', undefined]] as const) {
      const before = a.asked();
      const target = deliveryTarget(find, msg(`a:${i}`, configId), 'ack');
      assert.ok(!(target instanceof Error), `a:${i} has a target`);
      assert.deepEqual([target.deliveryId, target.config, target.sessions, target.session], [`a:${i}`, configId, sessions, a.session]);
      assert.equal(a.asked() - before, 1, `a:${i}: its session asked once`);
    }
    const gone = deliveryTarget(find, msg('z:1', 'cfg'), 'ack');
    assert.ok(gone instanceof Error && /its retry consumer is gone/.test(gone.message));
    const other = deliveryTarget(find, msg('a:4', 'other-cfg'), 'ack');
    assert.ok(other instanceof Error && /its retry consumer is gone/.test(other.message), 'a configuration that is not deployed');
  });

  it('a batch msg has no single target: an error saying which nodes settle it, its items not looked up', () => {
    const find = (): never => assert.fail('a batch is not looked up as one delivery');
    const batch = { payload: [1, 2], amqp: { config: 'cfg', queue: 'q', batch: { id: 'b', size: 2, split: 0 }, items: [{ deliveryId: 'a:1' }, { deliveryId: 'a:2' }] } };
    const refused = deliveryTarget(find, batch, 'ack');
    assert.ok(refused instanceof Error);
    assert.equal(refused.message, 'this msg is a batch of 2 items: settle it with retry-settle or park-publisher');
  });
});
