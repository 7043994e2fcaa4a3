/** An outbox relay's status, case by case: the most urgent fact first. */
import assert from 'node:assert/strict';
import { relayStatus, type RelayState } from '../../../../src/nodes/outbox-relay/relay-status';
import { statusKey } from '../../../../src/nodes/shared/i18n';

const t = (key: string, args?: Record<string, unknown>): string => `${key}${args ? JSON.stringify(args) : ''}`;
const up = { fill: 'green', shape: 'dot', text: 'db up' } as const;
const working: RelayState = { tableProblem: undefined, dbStatus: up, brokerConnected: true, brokerStatus: undefined, sent: 7, rows: { pending: 2, failed: 0 } };

describe('outbox relay status (src/nodes/outbox-relay/relay-status.ts)', function () {
  it('a table problem first; a database problem shows as the database’s own status', () => {
    const down = { fill: 'red', shape: 'ring', text: 'db down' } as const;
    assert.deepEqual(relayStatus({ ...working, tableProblem: { kind: 'table', text: 'no column' }, brokerConnected: false }, t), { fill: 'red', shape: 'ring', text: statusKey('outbox-relay.status.table') });
    assert.deepEqual(relayStatus({ ...working, tableProblem: { kind: 'database', text: 'refused' }, dbStatus: down }, t), down);
    assert.deepEqual(relayStatus({ ...working, dbStatus: down, brokerConnected: false }, t), down);
  });

  it('then the broker: its last status, or waiting before it pushed one', () => {
    const connecting = { fill: 'yellow', shape: 'ring', text: 'connecting' } as const;
    assert.deepEqual(relayStatus({ ...working, brokerConnected: false, brokerStatus: connecting }, t), connecting);
    assert.deepEqual(relayStatus({ ...working, brokerConnected: false }, t), { fill: 'yellow', shape: 'ring', text: statusKey('outbox-relay.status.waiting') });
  });

  it('then the rows given up on before the counts; green when none failed', () => {
    assert.deepEqual(relayStatus(working, t), { fill: 'green', shape: 'dot', text: 'outbox-relay.status.counts{"sent":7,"pending":2}' });
    assert.deepEqual(relayStatus({ ...working, rows: { pending: 0, failed: 3 } }, t), { fill: 'yellow', shape: 'dot', text: 'outbox-relay.status.failed{"count":3}outbox-relay.status.counts{"sent":7,"pending":0}' });
    assert.deepEqual(relayStatus({ ...working, rows: undefined }, t), { fill: 'green', shape: 'dot', text: 'outbox-relay.status.counts{"sent":7,"pending":0}' });
  });
});
