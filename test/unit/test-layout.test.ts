/**
 * Tests found by name: the unit test of `src/lib/x/y.ts` is `test/unit/x/y.test.ts`, of `src/nodes/…`,
 * `src/editor/…`, `src/migrate/…` the same path under `test/unit/nodes/…` etc. This keeps it so: a test
 * in a folder names a module that exists, so a renamed or removed module's test cannot go stale
 * unnoticed. Tests of the whole (architecture, docs, i18n…) sit at test/unit's top level.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const UNIT = path.join(ROOT, 'test/unit');
const LIB = path.join(ROOT, 'src/lib');
/** test/unit folders that mirror a src folder other than src/lib's, and the fixtures the tests share. */
const MIRRORED = ['nodes', 'editor', 'migrate'];
const NOT_TESTS = ['fixtures'];

function testsUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return testsUnder(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

/** The module a test in a folder names, as `src/...` paths it may be (a file, or a folder's index). */
function moduleCandidates(testPath: string): string[] {
  const [top, ...rest] = testPath.replace(/\.test\.ts$/, '').split('/');
  const base = MIRRORED.includes(top!) ? path.join('src', top!) : path.join('src/lib', top!);
  const rel = path.join(base, ...rest);
  if (path.basename(rel) === 'index') return [`${rel}.ts`];
  return [`${rel}.ts`, path.join(rel, 'index.ts')];
}

const libFolders = readdirSync(LIB).filter((name) => statSync(path.join(LIB, name)).isDirectory());

describe('unit tests are found by the name of what they test', () => {
  it('names a test by the path of its module (a file, or a folder index)', () => {
    assert.deepEqual(moduleCandidates('topology/plan.test.ts'), ['src/lib/topology/plan.ts', 'src/lib/topology/plan/index.ts']);
    assert.deepEqual(moduleCandidates('migrate/index.test.ts'), ['src/migrate/index.ts']);
    assert.deepEqual(moduleCandidates('nodes/shared/audit.test.ts'), ['src/nodes/shared/audit.ts', 'src/nodes/shared/audit/index.ts']);
  });

  it('puts every test folder under a src/lib folder or a mirrored src folder', () => {
    const folders = readdirSync(UNIT).filter((name) => statSync(path.join(UNIT, name)).isDirectory());
    const stray = folders.filter((name) => !libFolders.includes(name) && !MIRRORED.includes(name) && !NOT_TESTS.includes(name));
    assert.deepEqual(stray, [], 'a test folder that mirrors no src folder');
  });

  it('has, for every test in a folder, the module it names', () => {
    const stale = testsUnder(UNIT)
      .map((file) => path.relative(UNIT, file))
      .filter((rel) => rel.includes('/') && !NOT_TESTS.includes(rel.split('/')[0]!))
      .filter((rel) => !moduleCandidates(rel).some((candidate) => existsSync(path.join(ROOT, candidate))))
      .map((rel) => `test/unit/${rel}: none of ${moduleCandidates(rel).join(', ')}`);
    assert.deepEqual(stale, [], 'tests whose module was renamed or removed: move the test with its module');
  });

  it('keeps at the top level only tests of the whole, none named as a src/lib module', () => {
    const modules = new Set(libFolders.flatMap((folder) => readdirSync(path.join(LIB, folder)).map((name) => name.replace(/\.ts$/, ''))));
    const misplaced = readdirSync(UNIT)
      .filter((name) => name.endsWith('.test.ts') && modules.has(name.replace(/\.test\.ts$/, '')))
      .map((name) => `test/unit/${name}`);
    assert.deepEqual(misplaced, [], 'a module\'s test belongs in its folder: test/unit/<folder>/<module>.test.ts');
  });
});
