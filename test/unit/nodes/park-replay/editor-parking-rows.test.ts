import assert from 'node:assert/strict';
import { oneAtATime } from '../../../../src/nodes/park-replay/editor-parking-rows';

describe("the parking browser's reads, one at a time", () => {
  it('starts each read only after the one before finished, in the order asked', () => {
    const inTurn = oneAtATime();
    const log: string[] = [];
    const finish: Record<string, () => void> = {};
    for (const name of ['list', 'groups', 'body']) {
      inTurn((finished) => {
        log.push(`start ${name}`);
        finish[name] = finished;
      });
    }
    assert.deepEqual(log, ['start list']);
    finish.list!();
    assert.deepEqual(log, ['start list', 'start groups']);
    finish.groups!();
    finish.body!();
    // Idle again: the next one starts at once.
    inTurn(() => log.push('start replay'));
    assert.deepEqual(log, ['start list', 'start groups', 'start body', 'start replay']);
  });
});
