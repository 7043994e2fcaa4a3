import assert from 'node:assert/strict';
import type { ConsumerSession } from '../../../../src/lib/consume';
import { ConsumerSessions } from '../../../../src/nodes/shared/consumer-sessions';

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
  it('finds the issuing session among several, and asks it once for the same id asked twice in a row', () => {
    const sessions = new ConsumerSessions();
    const a = fakeSession('a');
    const b = fakeSession('b');
    sessions.add(a.session, 'node-a');
    sessions.add(b.session, 'node-b');
    assert.equal(sessions.issuer('b:1'), b.session);
    const askedOnce = b.asked();
    assert.equal(sessions.issuer('b:1'), b.session);
    assert.equal(b.asked(), askedOnce, 'the second ask of the same id is answered without asking the session');
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
});
