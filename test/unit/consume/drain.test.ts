/** The settle path's parts without a broker, through their narrow interfaces: Settler.copy, OrderedHold, Drain. */
import assert from 'node:assert/strict';
import { Drain } from '../../../src/lib/consume';

describe('Drain', () => {
  it('is idle at once when nothing is in flight', async () => {
    assert.equal(await new Drain(() => 0).until(1000), true);
  });

  it('waits for what is in flight to be settled, woken by a change', async () => {
    let inFlight = 2;
    const drain = new Drain(() => inFlight);
    const done = drain.until(5000);
    inFlight = 1;
    drain.changed();
    inFlight = 0;
    drain.changed();
    assert.equal(await done, true);
  });

  it('gives up after its time and says how many stay unsettled', async () => {
    const drain = new Drain(() => 3);
    assert.equal(await drain.until(10), false);
    assert.equal(await drain.stopping(Promise.resolve(), { drainMs: 10 }), 'stopping with 3 messages unsettled: the broker redelivers them');
  });

  it('does not wait when the nodes that settle stop too', async () => {
    const drain = new Drain(() => 1);
    const said = await drain.stopping(undefined, { drainMs: 60_000, settlePath: () => false });
    assert.match(said ?? '', /1 message unsettled \(the nodes that settle them are stopping too\)/);
  });
});
