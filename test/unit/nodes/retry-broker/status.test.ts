/** The broker's status while it waits to reconnect: the wait in whole seconds, rounded, never 0. */
import assert from 'node:assert/strict';
import { connectionStatus } from '../../../../src/nodes/retry-broker/status';
import { translator } from '../../../../src/nodes/shared/i18n';

const shown = translator({ _: (key: string, args?: Record<string, unknown>) => `${key} ${JSON.stringify(args ?? {})}` });
const waitingFor = (retryInMs: number): string => String(connectionStatus({ phase: 'waiting', error: 'connection refused', retryInMs }, undefined, shown).text);

describe('broker status while waiting to reconnect', () => {
  it('says the wait rounded: 1.01 s is 1 s, 1.6 s is 2 s', () => {
    assert.match(waitingFor(1010), /"seconds":1\}/);
    assert.match(waitingFor(1600), /"seconds":2\}/);
    assert.match(waitingFor(30_000), /"seconds":30\}/);
  });

  it('never says 0 s', () => {
    assert.match(waitingFor(200), /"seconds":1\}/);
    assert.match(waitingFor(0), /"seconds":1\}/);
  });
});
