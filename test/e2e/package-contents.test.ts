/**
 * The tarball as npm publishes it (`npm pack`, extracted): what its README links to is in it — every
 * relative link and image of the packed README.md, CHANGELOG.md and docs/**.md resolves to a file
 * inside the package (and to a heading of it, for `#…`) — and the editor is in it once, as the bundle
 * resources/editor.js that the editor loads: not its compiled sources (dist/editor, dist/nodes/<type>/editor.*) beside it, and no
 * source map of code that runs in the browser.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { anchorsOf, markdownUnder, relativeLinks } from '../helpers/markdown-links';
import { packPackage } from '../helpers/node-red-process';

/** Every file under dir, as paths relative to it with '/'. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    const name = `${prefix}${entry}`;
    return statSync(file).isDirectory() ? filesUnder(file, `${name}/`) : [name];
  });
}

describe('the packed package (npm pack)', function () {
  this.timeout(120_000);
  let packDir = '';
  let root = '';
  let files: string[] = [];

  before(async () => {
    packDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-retry-packed-'));
    const tarball = await packPackage(packDir);
    execFileSync('tar', ['-xzf', tarball, '-C', packDir]);
    root = path.join(packDir, 'package');
    files = filesUnder(root);
  });

  after(() => {
    if (packDir) rmSync(packDir, { recursive: true, force: true });
  });

  it('resolves every relative link of its README, CHANGELOG and docs inside the package', () => {
    assert.ok(existsSync(path.join(root, 'docs')), 'docs/ is packed');
    const pages = [path.join(root, 'README.md'), path.join(root, 'CHANGELOG.md'), ...markdownUnder(path.join(root, 'docs'))];
    let checked = 0;
    const broken: string[] = [];
    for (const page of pages) {
      for (const link of relativeLinks(page)) {
        checked++;
        const where = `${path.relative(root, page)} links ${link.target}`;
        const inside = path.relative(root, link.file);
        if (inside.startsWith('..') || path.isAbsolute(inside)) broken.push(`${where}: outside the package`);
        else if (!existsSync(link.file)) broken.push(`${where}: not in the package`);
        else if (link.anchor !== undefined && link.file.endsWith('.md') && !anchorsOf(link.file).has(link.anchor)) broken.push(`${where}: no such heading`);
      }
    }
    assert.deepEqual(broken, []);
    // The README alone links the docs of every node and shows pictures: far more than a handful.
    assert.ok(checked > 50, `only ${checked} relative links found in the packed docs`);
    const readmeImages = relativeLinks(path.join(root, 'README.md')).filter((link) => /\.(png|svg)$/.test(link.file));
    assert.ok(readmeImages.length > 0, "the README's images are among them");
  });

  it('ships the flow converter as its command (package.json "bin"), runnable without Node-RED', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string> };
    const bin = pkg.bin[pkg.name] ?? '';
    assert.ok(existsSync(path.join(root, bin)), `${bin} is packed`);
    assert.match(readFileSync(path.join(root, bin), 'utf8'), /^#!\/usr\/bin\/env node/);
    const example = path.resolve(__dirname, '../fixtures/migrate/meowwolf/Manual NAck With Links.json');
    const out = execFileSync(process.execPath, [path.join(root, bin), 'migrate', example], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    assert.ok((JSON.parse(out) as Array<{ type: string }>).some((n) => n.type === 'retry-consumer'));
  });

  it('ships the editor once, as the bundle the editor loads, and no source maps of browser code', () => {
    assert.ok(files.includes('resources/editor.js'), 'resources/editor.js');
    assert.deepEqual(
      files.filter((file) => file.startsWith('dist/editor/') || file.startsWith('dist/editor.') || /^dist\/(nodes\/[^/]+|migrate)\/editor[.-]/.test(file)),
      [],
      'dist/editor.js (the editor root), dist/editor, dist/nodes/<type>/editor*, dist/migrate/editor-*: the compiled editor sources, bundled into resources/editor.js',
    );
    const browserMaps = files
      .filter((file) => file.endsWith('.map'))
      .filter((file) => ((JSON.parse(readFileSync(path.join(root, file), 'utf8')) as { sources?: string[] }).sources ?? []).some((source) => source.includes('src/editor/') || /src\/editor\.ts$/.test(source) || /src\/(nodes\/[^/]+|migrate)\/editor(-[\w-]+)?\.ts$/.test(source)));
    assert.deepEqual(browserMaps, [], 'source maps of editor code');
    // What runs in Node keeps its maps (stack traces point into src/).
    assert.ok(files.includes('dist/lib/index.js.map'), 'dist/lib keeps its source maps');
  });
});
