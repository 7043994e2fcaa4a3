import assert from 'node:assert/strict';
import { LogLimiter } from '../../../src/lib/observe/log-limiter';

describe('log limiter', () => {
  const make = (windowMs = 10_000) => {
    const lines: string[] = [];
    const limiter = new LogLimiter((t) => lines.push(t), (n, last, ms) => `${n} more in ${ms} ms, last: ${last}`, 2, windowMs);
    return { lines, limiter };
  };

  it('writes the first lines of a window as they come and sums up the rest in one line', () => {
    const { lines, limiter } = make();
    for (const t of ['a', 'b', 'c', 'd', 'e']) limiter.say(t);
    assert.deepEqual(lines, ['a', 'b']);
    limiter.flush();
    assert.deepEqual(lines, ['a', 'b', '3 more in 10000 ms, last: e']);
    limiter.say('f');
    assert.deepEqual(lines.at(-1), 'f');
  });

  it('writes no summary when nothing was held', () => {
    const { lines, limiter } = make();
    limiter.say('a');
    limiter.flush();
    assert.deepEqual(lines, ['a']);
  });

  it('ends the window by itself', async () => {
    const { lines, limiter } = make(20);
    for (const t of ['a', 'b', 'c']) limiter.say(t);
    for (let i = 0; i < 100 && lines.length < 3; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(lines, ['a', 'b', '1 more in 20 ms, last: c']);
    limiter.say('d');
    assert.equal(lines.at(-1), 'd');
    limiter.flush();
  });
});
