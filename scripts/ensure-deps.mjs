// Runs `npm ci` when a dependency of package.json is missing, so `npm start` and `npm test` work
// straight from a fresh clone, and after a pull that added one. Does nothing (and costs nothing)
// once they are installed.
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const needed = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
const missing = needed.filter((name) => !existsSync(new URL(`../node_modules/${name}/package.json`, import.meta.url)));
if (missing.length > 0) {
  console.log(`Installing dependencies (missing: ${missing.join(', ')}) with npm ci ...`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { stdio: 'inherit', cwd: new URL('..', import.meta.url) });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
