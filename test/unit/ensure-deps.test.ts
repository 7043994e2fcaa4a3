/**
 * `npm start` / `npm test` install the dependencies themselves (scripts/ensure-deps.mjs): also after
 * a pull that added one, not only on a fresh clone — else the next lint or test fails on a missing
 * module with a message that does not say "run npm ci".
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const script = path.resolve(__dirname, '../../scripts/ensure-deps.mjs');

describe('scripts/ensure-deps.mjs', function () {
  this.timeout(60_000);
  let dir = '';

  /** A checkout whose node_modules holds `installed`; runs the script there. */
  function runIn(dependencies: Record<string, string>, devDependencies: Record<string, string>, installed: string[]): string {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ensure-deps-'));
    mkdirSync(path.join(dir, 'scripts'));
    copyFileSync(script, path.join(dir, 'scripts', 'ensure-deps.mjs'));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0', private: true, dependencies, devDependencies }));
    for (const name of installed) {
      mkdirSync(path.join(dir, 'node_modules', name), { recursive: true });
      writeFileSync(path.join(dir, 'node_modules', name, 'package.json'), JSON.stringify({ name, version: '1.0.0' }));
    }
    // No package-lock.json here: the npm ci it starts fails at once, without the network.
    const result = spawnSync(process.execPath, [path.join(dir, 'scripts', 'ensure-deps.mjs')], { cwd: dir, encoding: 'utf8' });
    return result.stdout;
  }

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('installs when a dependency added to package.json is missing', () => {
    const installed = ['typescript', 'node-red', 'mocha', 'tsx', 'amqplib'];
    const out = runIn({ amqplib: '*' }, { typescript: '*', 'node-red': '*', mocha: '*', tsx: '*', 'playwright-core': '*' }, installed);
    assert.match(out, /Installing dependencies \(missing: playwright-core\) with npm ci/);
  });

  it('does nothing when every dependency is installed', () => {
    assert.equal(runIn({ amqplib: '*' }, { mocha: '*' }, ['amqplib', 'mocha']), '');
  });
});
