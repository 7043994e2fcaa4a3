/**
 * An outbox node's table watch: tries again while the table is not usable, logs a table problem once
 * per distinct text and a database problem not at all, says when the table is usable, stops on close.
 */
import assert from 'node:assert/strict';
import { TablePrepareError } from '../../../../src/nodes/shared/outbox-node';
import { TableWatch } from '../../../../src/nodes/shared/table-watch';
import { parseTableName, type TableName } from '../../../../src/lib/postgres';
import { waitFor } from '../../../helpers/broker';

const table = parseTableName('app.outbox') as TableName;

/** A prepare answering from a script of outcomes (the last one repeats), and what the watch said. */
function scripted(outcomes: Array<'ok' | Error>): { watch: TableWatch; tries: () => number; said: string[] } {
  let tries = 0;
  const said: string[] = [];
  const prepare = (): Promise<void> => {
    const outcome = outcomes[Math.min(tries, outcomes.length - 1)]!;
    tries += 1;
    return outcome === 'ok' ? Promise.resolve() : Promise.reject(outcome);
  };
  const watch = new TableWatch({ table, prepare }, 1, {
    error: (text) => said.push(`error: ${text}`),
    log: (text) => said.push(`log: ${text}`),
    usable: () => said.push('usable'),
    changed: () => undefined,
  });
  return { watch, tries: () => tries, said };
}

describe('outbox table watch', function () {
  it('tries again until the table is usable; logs each table problem once per text, then that it is usable', async () => {
    const missing = new TablePrepareError('outbox table: table "outbox" has no column order_key (text)', 'table');
    const index = new TablePrepareError('outbox table: table "outbox" has no index on (sent_at) for sent rows', 'table');
    const { watch, tries, said } = scripted([missing, missing, missing, index, index, 'ok']);
    watch.start();
    await waitFor(() => said.includes('usable'), 'the table usable');
    assert.equal(tries(), 6);
    assert.deepEqual(said, [`error: ${missing.message}`, `error: ${index.message}`, 'log: outbox table app.outbox is usable now', 'usable']);
    assert.equal(watch.problem, undefined);
    watch.stop();
  });

  it('a database problem is the database\'s to log: kept as such, not logged', async () => {
    const refused = new TablePrepareError('outbox table "outbox": password authentication failed', 'database');
    const { watch, said } = scripted([refused, refused, 'ok']);
    await assert.rejects(watch.check());
    assert.deepEqual(watch.problem, { text: refused.message, kind: 'database' });
    await waitFor(() => said.includes('usable'), 'the table usable');
    assert.deepEqual(said, ['log: outbox table app.outbox is usable now', 'usable']);
    watch.stop();
  });

  it('an error that is not a TablePrepareError is a table problem', async () => {
    const { watch, said } = scripted([new Error('boom')]);
    await assert.rejects(watch.check());
    assert.deepEqual(watch.problem, { text: 'boom', kind: 'table' });
    assert.deepEqual(said, ['error: boom']);
    watch.stop();
  });

  it('stops trying once stopped: no try is scheduled, not even after a try that fails', async () => {
    const missing = new TablePrepareError('outbox table: table "outbox" does not exist (declare mode creates it)', 'table');
    const { watch } = scripted([missing]);
    const scheduled = (): boolean => (watch as unknown as { timer: NodeJS.Timeout | undefined }).timer !== undefined;
    await assert.rejects(watch.check());
    assert.ok(scheduled(), 'a try scheduled while not usable');
    watch.stop();
    assert.ok(!scheduled(), 'none once stopped');
    await assert.rejects(watch.check());
    assert.ok(!scheduled(), 'none after a try that failed after the stop');
  });
});
