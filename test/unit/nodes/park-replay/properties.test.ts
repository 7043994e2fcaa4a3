import assert from 'node:assert/strict';
import { parkReplaySettings, PARK_NODE_ACTIONS, REPLAY_VERSIONS, REPLAY_NUMBERS } from '../../../../src/nodes/park-replay/properties';
import { missingProperties } from '../../../../src/nodes/shared/properties';

describe('park-replay properties', function () {
  it('reads a node saved with its defaults', function () {
    assert.deepEqual(parkReplaySettings({ action: 'replay', max: '100', resetAttempts: true, reason: '' }), { action: 'replay', max: 100, resetAttempts: true, reason: '', problem: undefined });
  });

  it('reads a first-release node (no action, no reason, no version): resetting attempts, every reason', function () {
    const settings = parkReplaySettings({ max: 5 });
    assert.deepEqual(settings, { action: undefined, max: 5, resetAttempts: true, reason: '', problem: undefined });
    assert.deepEqual(missingProperties(REPLAY_VERSIONS, REPLAY_NUMBERS, {}), { action: 'replay', reason: '' });
    assert.deepEqual(missingProperties(REPLAY_VERSIONS, REPLAY_NUMBERS, { version: 2, action: 'peek' }), { reason: '' });
    assert.deepEqual(missingProperties(REPLAY_VERSIONS, REPLAY_NUMBERS, { version: 3 }), {});
  });

  it('keeps resetting attempts unless turned off, and trims the reason', function () {
    assert.equal(parkReplaySettings({ resetAttempts: false }).resetAttempts, false);
    assert.equal(parkReplaySettings({ resetAttempts: 'no' }).resetAttempts, true);
    assert.equal(parkReplaySettings({ reason: '  timeout ' }).reason, 'timeout');
    assert.equal(parkReplaySettings({ reason: 42 }).reason, '');
  });

  it('says what is wrong with a bad max (taking its fallback) or a bad reason filter', function () {
    const bad = parkReplaySettings({ max: '0' });
    assert.equal(bad.max, REPLAY_NUMBERS.max.fallback);
    assert.match(String(bad.problem), /at most/);
    assert.match(String(parkReplaySettings({ max: 'x' }).problem), /at most/);
    assert.equal(parkReplaySettings({ max: '2.5' }).max, REPLAY_NUMBERS.max.fallback, 'an integer field');
    assert.match(String(parkReplaySettings({ reason: '/(/' }).problem), /^reason: /);
  });

  it('offers its actions and `topic`', function () {
    assert.deepEqual([...PARK_NODE_ACTIONS], ['replay', 'peek', 'purge', 'groups', 'topic']);
  });
});
