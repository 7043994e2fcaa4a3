import assert from 'node:assert/strict';
import { outboxWriteProperties } from '../../../../src/nodes/outbox-write/properties';
import { DEFAULT_OUTBOX_TABLE } from '../../../../src/nodes/shared/properties';

describe('outbox-write properties', function () {
  it('a node saved without its properties: the default table in declare mode, an event, persistent, no store', function () {
    assert.deepEqual(outboxWriteProperties({}), {
      postgres: '',
      table: DEFAULT_OUTBOX_TABLE,
      mode: 'declare',
      dedupe: '',
      event: { withEvent: true, exchange: '', routingKey: '', persistent: true },
    });
  });

  it('reads what it is set to (names trimmed)', function () {
    const read = outboxWriteProperties({ postgres: 'pg1', table: ' app.outbox ', mode: 'check', dedupe: 'd1', event: false, exchange: ' orders ', routingKey: 'created', persistent: false });
    assert.deepEqual(read, { postgres: 'pg1', table: 'app.outbox', mode: 'check', dedupe: 'd1', event: { withEvent: false, exchange: 'orders', routingKey: 'created', persistent: false } });
  });

  it('keeps a mode it does not know as it is (outboxTarget says it is not one of the modes); an empty table is the default', function () {
    const read = outboxWriteProperties({ mode: 'drop', table: '  ' });
    assert.equal(read.mode, 'drop');
    assert.equal(read.table, DEFAULT_OUTBOX_TABLE);
  });

  it('only false turns the event or persistence off (anything else saved keeps them on)', function () {
    assert.deepEqual(outboxWriteProperties({ event: 'false', persistent: 0 }).event, { withEvent: true, exchange: '', routingKey: '', persistent: true });
  });
});
