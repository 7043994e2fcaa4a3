/**
 * The documentation stays true to the package: the README stays short and links what it names, every
 * relative link in the docs resolves, and each node's page in docs/nodes lists exactly the properties
 * its editor dialog saves into a flow (the names a flow built through the admin API uses), with the
 * same defaults.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DIALOGS } from '../../src/editor';
import type { NodeDefinition } from '../../src/editor/red';
import { anchorsOf, markdownUnder, relativeLinks } from '../helpers/markdown-links';
import { cellsOf } from '../helpers/markdown-tables';

const ROOT = path.resolve(__dirname, '../..');
const DOCS = path.join(ROOT, 'docs');
const NODE_TYPES = Object.keys((JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } })['node-red'].nodes);

/**
 * Each node type's definition, as the editor gets it: the dialog modules are pure functions of a
 * translator (nothing of a dialog's UI runs).
 */
function registeredTypes(): Record<string, NodeDefinition> {
  return Object.fromEntries(Object.entries(DIALOGS).map(([type, dialog]) => [type, dialog((key) => key)]));
}

/** The rows of the page's first table whose header starts with `property`: name → default cell. */
function propertyTable(page: string): Map<string, string> {
  const lines = page.split('\n');
  const start = lines.findIndex((line) => /^\|\s*property\s*\|/.test(line));
  assert.ok(start >= 0, 'a table headed | property | … |');
  const header = cellsOf(lines[start] ?? '');
  const defaultColumn = header.indexOf('default');
  assert.ok(defaultColumn > 0, 'the table has a default column');
  const rows = new Map<string, string>();
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const cells = cellsOf(line);
    const name = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1];
    assert.ok(name, `a property name in backticks: ${line}`);
    rows.set(name, cells[defaultColumn] ?? '');
  }
  return rows;
}

/** A default cell as a value: `"x"` / `5` / `true`, with or without backticks; `""` is the empty string. */
function cellValue(cell: string): unknown {
  const text = cell.replace(/^`|`$/g, '');
  return JSON.parse(text) as unknown;
}

describe('documentation', function () {
  it('keeps the README short: what, how to start, the nodes, links', function () {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const lines = readme.split('\n').length;
    assert.ok(lines <= 250, `README.md has ${lines} lines: the reference belongs in docs/`);
    for (const type of NODE_TYPES) assert.ok(readme.includes(`(docs/nodes/${type}.md)`), `README.md links docs/nodes/${type}.md`);
  });

  it('links only to files and headings that exist', function () {
    const files = [path.join(ROOT, 'README.md'), path.join(ROOT, 'CHANGELOG.md'), ...markdownUnder(DOCS)];
    for (const file of files) {
      for (const link of relativeLinks(file)) {
        const where = `${path.relative(ROOT, file)} links ${link.target}`;
        assert.ok(existsSync(link.file), `${where}, which does not exist`);
        if (link.anchor !== undefined && link.file.endsWith('.md')) assert.ok(anchorsOf(link.file).has(link.anchor), `${where}: no such heading`);
      }
    }
  });

  it('lists every property of each node as its dialog saves it, with its default (docs/nodes/<type>.md)', function () {
    const registered = registeredTypes();
    assert.deepEqual(Object.keys(registered).sort(), [...NODE_TYPES].sort(), 'every node type registers a dialog');
    for (const type of NODE_TYPES) {
      const file = path.join(DOCS, 'nodes', `${type}.md`);
      assert.ok(existsSync(file), `docs/nodes/${type}.md`);
      const page = readFileSync(file, 'utf8');
      const table = propertyTable(page);
      const { defaults, credentials = {} } = registered[type] as NodeDefinition;
      for (const [name, definition] of Object.entries(defaults)) {
        assert.ok(table.has(name), `docs/nodes/${type}.md lists \`${name}\``);
        assert.deepEqual(cellValue(table.get(name) ?? ''), definition.value, `docs/nodes/${type}.md: the default of \`${name}\``);
      }
      for (const name of table.keys()) {
        assert.ok(name in defaults || name in credentials, `docs/nodes/${type}.md lists \`${name}\`, which ${type} does not have`);
      }
      for (const name of Object.keys(credentials)) assert.ok(page.includes(`\`${name}\``), `docs/nodes/${type}.md names the credential \`${name}\``);
    }
  });
});
