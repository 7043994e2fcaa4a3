import assert from 'node:assert/strict';
import { readNumberFields } from '../../../../src/lib/rules/number-fields';
import { CONSUMER_NUMBERS, CONSUMER_VERSIONS, DECODE_MODES, INVALID_BODY_ACTIONS, restartMaxProblem } from '../../../../src/nodes/retry-consumer/properties';
import { missingProperties, savedVersion } from '../../../../src/nodes/shared/properties';

describe('retry-consumer properties', function () {
  it('reads every number of a node saved with none at their fallbacks', function () {
    const { values, problems } = readNumberFields({}, CONSUMER_NUMBERS);
    assert.deepEqual(problems, []);
    assert.equal(values.prefetch, 10);
    assert.equal(values.batchSize, 500);
    assert.equal(values.circuitRestartMax, 300);
  });

  it('says what is wrong with a bad number', function () {
    const { problems } = readNumberFields({ prefetch: '0', batchWait: '70000', rateLimit: 'fast' }, CONSUMER_NUMBERS);
    assert.equal(problems.length, 3);
    assert.match(problems.join('; '), /prefetch/);
  });

  it('fills in what each older version lacks, and nothing on the current one', function () {
    assert.equal(savedVersion({}), 1);
    assert.equal(savedVersion({ version: 'x' }), 1);
    assert.equal(savedVersion({ version: '4' }), 4);
    assert.equal(missingProperties(CONSUMER_VERSIONS, CONSUMER_NUMBERS, {}).mode, 'retry');
    assert.equal(missingProperties(CONSUMER_VERSIONS, CONSUMER_NUMBERS, {}).orderedPause, '5', 'a number means its fallback');
    assert.deepEqual(missingProperties(CONSUMER_VERSIONS, CONSUMER_NUMBERS, { version: 5 }), { batchSize: '500', batchWait: '200' });
    assert.deepEqual(missingProperties(CONSUMER_VERSIONS, CONSUMER_NUMBERS, { version: 5, batchSize: 20 }), { batchWait: '200' }, 'a saved value stays');
    assert.deepEqual(missingProperties(CONSUMER_VERSIONS, CONSUMER_NUMBERS, { version: CONSUMER_VERSIONS.version }), {});
  });

  it('refuses a longest restart timeout below the first', function () {
    assert.equal(restartMaxProblem(30, 300), undefined);
    assert.equal(restartMaxProblem(30, 30), undefined);
    assert.match(String(restartMaxProblem(30, 10)), /at least the restart timeout \(30 s\)/);
  });

  it('lists its choices', function () {
    assert.deepEqual([...DECODE_MODES], ['auto', 'json', 'string', 'buffer']);
    assert.deepEqual([...INVALID_BODY_ACTIONS], ['park', 'error']);
  });
});
