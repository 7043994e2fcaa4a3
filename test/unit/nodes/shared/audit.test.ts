import assert from 'node:assert/strict';
import { actorOf, audit, auditEventName, requestOrigin } from '../../../../src/nodes/shared/audit';
import type { AdminRequest, NodeAPI } from '../../../../src/nodes/shared/node-red';

function recorder(): { RED: Pick<NodeAPI, 'log'>; events: Array<{ event: Record<string, unknown>; req: unknown }> } {
  const events: Array<{ event: Record<string, unknown>; req: unknown }> = [];
  const log = { warn: () => undefined, info: () => undefined, audit: (event: Record<string, unknown>, req?: unknown) => events.push({ event, req }) };
  return { RED: { log }, events };
}

const request = (user?: { username?: string }): AdminRequest => ({ body: {}, params: {}, ...(user === undefined ? {} : { user }) });

describe('audit (Node-RED audit log of parking actions)', () => {
  it('names the event rabbitmq-retry.<action> and passes the details and the request along', () => {
    const { RED, events } = recorder();
    const req = request({ username: 'alice' });
    audit(RED, 'replay', { config: 'c1', queue: 'orders.parking', count: 3, filter: { group: 'g' } }, req);
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]!.event, { event: 'rabbitmq-retry.replay', config: 'c1', queue: 'orders.parking', count: 3, filter: { group: 'g' } });
    assert.equal(events[0]!.req, req);
    assert.equal(auditEventName('purge'), 'rabbitmq-retry.purge');
  });

  it('says who acted without a request: the given `by`, else flow', () => {
    const { RED, events } = recorder();
    audit(RED, 'purge', { count: 1, by: 'flow n1' });
    audit(RED, 'purge', { count: 1 });
    assert.equal(events[0]!.event.by, 'flow n1');
    assert.equal(events[1]!.event.by, 'flow');
    assert.equal(events[1]!.req, undefined);
  });

  it('never fails the action: no audit function, or one that throws', () => {
    audit({ log: { warn: () => undefined, info: () => undefined } }, 'replay', { count: 1 });
    const throwing = { log: { warn: () => undefined, info: () => undefined, audit: () => { throw new Error('disk full'); } } };
    assert.doesNotThrow(() => audit(throwing, 'replay', { count: 1 }));
  });

  it('actorOf: the admin user, else the flow, else the admin API', () => {
    assert.equal(actorOf(request({ username: 'bob' })), 'bob');
    assert.equal(actorOf(undefined, 'flow n1'), 'flow n1');
    assert.equal(actorOf(request()), 'admin API');
    assert.equal(actorOf(undefined), 'flow');
  });

  it("requestOrigin keeps what Node-RED's audit log reads of a request (user, path, address) as plain data, for an event written after the answer", () => {
    const socket = { remoteAddress: '10.0.0.7' as string | undefined };
    const req = { body: { rate: 1 }, params: { config: 'c1' }, user: { username: 'alice' }, path: '/rabbitmq-retry/parking/c1/paced', headers: {}, socket };
    const origin = requestOrigin(req);
    socket.remoteAddress = undefined; // the connection closed
    assert.deepEqual(origin, { body: undefined, params: {}, user: { username: 'alice' }, path: '/rabbitmq-retry/parking/c1/paced', ip: '10.0.0.7' });
    assert.equal(requestOrigin({ ...req, ip: '::1' }).ip, '::1');
    assert.equal(requestOrigin({ ...req, socket: undefined, headers: { 'x-forwarded-for': '192.0.2.1' } } as AdminRequest).ip, '192.0.2.1');
  });
});
