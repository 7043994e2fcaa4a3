import assert from 'node:assert/strict';
import type { MessageProperties } from 'amqplib';
import { parkHeaders } from '../fixtures/parked';
import { changedHeaders, checkEditedBody, EDIT_HEADERS, editedPublishOptions, EditRefused, isLockedHeader, readEdit } from '../../../src/lib/parking/edit';
import { replayPublishOptions, REPLAY_HEADER } from '../../../src/lib/parking/replay';
import { editPermission } from '../../../src/nodes/park-replay/edit-setting';

describe('edit and replay of a parked message', () => {
  it('locks the attempt history, the park record, the broker’s x- headers, the trace context and its own link', () => {
    for (const name of ['retry-attempt', 'retry-first-seen', 'retry-first-failure', 'retry-original-exchange', 'park-reason', 'park-error-stack', REPLAY_HEADER, 'x-death', 'x-first-death-queue', 'X-Death', 'traceparent', 'tracestate', 'Traceparent', 'replay-of', 'replayed-by', 'replayed-at', 'replay-id']) {
      assert.equal(isLockedHeader(name), true, name);
    }
    for (const name of ['customer', 'tenant', 'retry', 'parked', 'trace-id', 'content-encoding', 'xdeath']) assert.equal(isLockedHeader(name), false, name);
  });

  it('reads an edit, refusing a locked header by name, a missing body and values a message cannot carry', () => {
    assert.deepEqual(readEdit({ body: '{"a":1}', headers: { customer: 'c-2', n: 3 } }), { body: '{"a":1}', headers: { customer: 'c-2', n: 3 } });
    assert.deepEqual(readEdit({ body: '' }), { body: '', headers: {} });
    assert.throws(() => readEdit({ body: 'x', headers: { 'retry-attempt': 0 } }), (err: Error) => err instanceof EditRefused && /header 'retry-attempt' is locked/.test(err.message));
    assert.throws(() => readEdit({ body: 'x', headers: { traceparent: '00-…' } }), /header 'traceparent' is locked/);
    assert.throws(() => readEdit({ body: 'x', headers: { 'x-death': [] } }), /header 'x-death' is locked/);
    assert.throws(() => readEdit({ headers: {} }), /give the edited body as text/);
    assert.throws(() => readEdit({ body: 'x', headers: ['a'] }), /headers must be an object/);
    assert.throws(() => readEdit({ body: 'x', headers: { ' ': 1 } }), /header name ' ' must be 1 to 255 characters/);
    assert.throws(() => readEdit({ body: 'x', headers: { big: 1n } }), /header 'big' has no value a message can carry/);
  });

  it('keeps a JSON message’s body JSON', () => {
    checkEditedBody('{"amount": 10}', 'application/json');
    checkEditedBody('not json', 'text/plain');
    checkEditedBody('not json', null);
    assert.throws(() => checkEditedBody('{"amount": 10', 'application/json; charset=utf-8'), (err: Error) => err instanceof EditRefused && /the body is not JSON .*content type is application\/json; charset=utf-8/.test(err.message));
    assert.throws(() => checkEditedBody('', 'application/vnd.api+json'), /not JSON/);
  });

  it('names the editable headers an edit changes, adds or removes', () => {
    const original = { ...parkHeaders, customer: 'c-1', tenant: Buffer.from('t-1'), kept: 5, gone: true };
    assert.deepEqual(changedHeaders(original, { body: '', headers: { customer: 'c-2', tenant: 't-1', kept: 5, added: 'x' } }), ['added', 'customer', 'gone']);
    assert.deepEqual(changedHeaders(undefined, { body: '', headers: {} }), []);
  });

  const parked = {
    contentType: 'application/json',
    messageId: 'm-1',
    correlationId: 'c-9',
    headers: {
      customer: 'c-1',
      stale: 'remove me',
      ...parkHeaders,
      'park-replayed': 1,
      'retry-first-seen': 1,
      'x-death': [{ queue: 'main-queue', reason: 'rejected', count: 2 }],
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=1',
    },
  } as unknown as MessageProperties;
  const by = { user: 'alice', at: new Date('2026-11-28T05:00:00Z'), messageId: 'copy-1' };

  it('makes the edited copy: a new id, the link to the original and who edited it when, locked headers kept, editable ones replaced', () => {
    const copy = editedPublishOptions(replayPublishOptions(parked, true), parked, { body: '{}', headers: { customer: 'c-2', note: 'fixed by hand' } }, by);
    assert.deepEqual(copy.headers, {
      // Kept: the replay count (now 2) and the trace context; the park record and the attempt history go, as in any replay with reset attempts.
      [REPLAY_HEADER]: 2,
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=1',
      customer: 'c-2',
      note: 'fixed by hand',
      [EDIT_HEADERS.replayOf]: 'm-1',
      [EDIT_HEADERS.editedBy]: 'alice',
      [EDIT_HEADERS.editedAt]: '2026-11-28T05:00:00.000Z',
    });
    assert.equal(copy.messageId, 'copy-1');
    assert.equal(copy.correlationId, 'c-9');
    assert.equal(copy.contentType, 'application/json');
    assert.equal(copy.mandatory, true);
    assert.equal(copy.persistent, true);
  });

  it("carries this replay's record only: park-replayed counted up, its own replay-id, no earlier run's replay-id or redirect", () => {
    const replayedBefore = { ...parked, headers: { ...parked.headers, 'replay-id': 'paced-job-1', 'replay-redirected-to': '(default exchange) / fixer', 'replayed-by': 'bob', 'replayed-at': '2026-11-27T05:00:00.000Z' } } as MessageProperties;
    const copy = editedPublishOptions(replayPublishOptions(replayedBefore, true), replayedBefore, { body: '{}', headers: {} }, { ...by, replayId: 'edit-replay-1' });
    assert.equal(copy.headers?.[REPLAY_HEADER], 2);
    assert.equal(copy.headers?.['replay-id'], 'edit-replay-1');
    assert.equal(copy.headers?.['replay-redirected-to'], undefined);
    assert.equal(copy.headers?.[EDIT_HEADERS.editedBy], 'alice');
    assert.equal(copy.headers?.[EDIT_HEADERS.editedAt], '2026-11-28T05:00:00.000Z');
    const withoutId = editedPublishOptions(replayPublishOptions(replayedBefore, true), replayedBefore, { body: '{}', headers: {} }, by);
    assert.equal(withoutId.headers?.['replay-id'], undefined, 'none given: none, never the earlier run\'s');
  });

  it('keeps the attempt history when the replay keeps it; says anonymous without a user; links no id when the original had none', () => {
    const copy = editedPublishOptions(replayPublishOptions(parked, false), { messageId: undefined }, { body: '', headers: {} }, { ...by, user: undefined });
    assert.equal(copy.headers?.['retry-attempt'], 3);
    assert.equal(copy.headers?.['retry-first-seen'], 1);
    assert.deepEqual(copy.headers?.['x-death'], [{ queue: 'main-queue', reason: 'rejected', count: 2 }]);
    assert.equal(copy.headers?.customer, undefined);
    assert.equal(copy.headers?.[EDIT_HEADERS.editedBy], 'anonymous');
    assert.equal(copy.headers?.[EDIT_HEADERS.replayOf], null);
  });

  it('is off unless settings.js allows it: true for every writer, or a list of adminAuth users', () => {
    assert.deepEqual(editPermission({}, 'alice'), { allowed: false, reason: "editing parked messages is off: set rabbitmqRetry: { editParked: true } (or a list of user names) in Node-RED's settings.js" });
    assert.equal(editPermission(undefined, undefined).allowed, false);
    assert.equal(editPermission({ rabbitmqRetry: { editParked: false } }, 'alice').allowed, false);
    assert.deepEqual(editPermission({ rabbitmqRetry: { editParked: true } }, undefined), { allowed: true });
    assert.deepEqual(editPermission({ rabbitmqRetry: { editParked: ['alice', 'bob'] } }, 'bob'), { allowed: true });
    assert.deepEqual(editPermission({ rabbitmqRetry: { editParked: ['alice'] } }, 'mallory'), { allowed: false, reason: "user 'mallory' is not one rabbitmqRetry.editParked names in settings.js" });
    assert.match((editPermission({ rabbitmqRetry: { editParked: ['alice'] } }, undefined) as { reason: string }).reason, /nobody is logged in/);
    assert.match((editPermission({ rabbitmqRetry: { editParked: 'yes' } }, 'alice') as { reason: string }).reason, /must be true, false or a list of user names/);
    assert.match((editPermission({ rabbitmqRetry: { editParked: [1] } }, 'alice') as { reason: string }).reason, /must be true, false or a list/);
  });
});
