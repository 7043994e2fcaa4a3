/**
 * docs/architecture.md's "walk of one message", kept true: the files it names in order exist, there
 * are at most eight and each is named once, each defines what its step names, every other file the
 * walk mentions exists, and no file on the walk imports a file before it (directly, or through a
 * folder's index by a name that file defines): the walk never leads back into a file it left.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '../..');
const SRC = path.join(ROOT, 'src');

export interface WalkStep {
  file: string;
  /** What the step names in brackets after its file: `Name` or `Class.member`. */
  symbols: string[];
  text: string;
}

/** The section's numbered steps: `N. **`file`** (`Symbol`, …) — text`. */
export function walkSteps(markdown: string): { steps: WalkStep[]; section: string } {
  const start = markdown.indexOf('## The walk of one message');
  assert.ok(start >= 0, 'docs/architecture.md has a section "The walk of one message"');
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  const steps: WalkStep[] = [];
  for (const item of section.split(/\n(?=\d+\. )/).slice(1)) {
    const head = /^\d+\. \*\*`([^`]+)`\*\* \(([^)]*)\)/.exec(item);
    assert.ok(head, `a step names its file in bold and what does the step in brackets: ${item.slice(0, 80)}`);
    const symbols = [...(head[2] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
    steps.push({ file: head[1] ?? '', symbols, text: item });
  }
  return { steps, section };
}

/** Code without comments. */
function code(file: string): string {
  return readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Whether `source` defines `symbol`: a declared name, or `Class.member` (the class and a member of that name). */
export function defines(source: string, symbol: string): boolean {
  const [name, member] = symbol.split('.');
  const declared = new RegExp(`(?:class|function|const|let|interface|type|enum)\\s+${name ?? ''}\\b`).test(source);
  if (!declared || member === undefined) return declared;
  const body = source.slice(source.search(new RegExp(`class\\s+${name ?? ''}\\b`)));
  return new RegExp(`\\n\\s+(?:(?:private|readonly|async|get|static|public)\\s+)*${member}\\s*[(<:=]`).test(body);
}

/** The src files a file imports values from (`import type` left out), with the names it takes from each specifier. */
function valueImports(file: string): Array<{ target: string; names: string[] }> {
  const out: Array<{ target: string; names: string[] }> = [];
  for (const m of code(file).matchAll(/(?:^|\n)\s*import\s+(?!type\b)([^;]*?)\s+from\s+'(\.[^']+)'/g)) {
    const clause = m[1] ?? '';
    const base = path.resolve(path.dirname(file), m[2] ?? '');
    const target = [`${base}.ts`, path.join(base, 'index.ts')].find((candidate) => existsSync(candidate)) ?? base;
    const braced = /\{([^}]*)\}/.exec(clause)?.[1] ?? '';
    const names = braced
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '' && !n.startsWith('type '))
      .map((n) => n.split(/\s+as\s+/)[0] ?? '');
    if (names.length > 0 || !clause.includes('{')) out.push({ target, names });
  }
  return out;
}

/** The file a folder's index re-exports `name` from, if it does. */
function reexportedFrom(index: string, name: string): string | undefined {
  for (const m of readFileSync(index, 'utf8').matchAll(/export\s+\{([^}]*)\}\s+from\s+'(\.[^']+)'/g)) {
    const names = (m[1] ?? '').split(',').map((n) => n.trim().replace(/^type\s+/, '').split(/\s+as\s+/).at(-1));
    if (names.includes(name)) return `${path.resolve(path.dirname(index), m[2] ?? '')}.ts`;
  }
  return undefined;
}

const markdown = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
const { steps, section } = walkSteps(markdown);

describe('docs/architecture.md: the walk of one message', function () {
  it('names at most eight files, each once, each existing', function () {
    const files = steps.map((s) => s.file);
    assert.ok(files.length >= 2 && files.length <= 8, `the walk names ${files.length} files`);
    assert.equal(new Set(files).size, files.length, `a file is named twice: ${files.join(', ')}`);
    for (const file of files) assert.ok(existsSync(path.join(ROOT, file)), `${file} exists`);
  });

  it('each step names what in its file does it, and the file defines it', function () {
    for (const step of steps) {
      assert.ok(step.symbols.length > 0, `${step.file}: names what does the step`);
      const source = code(path.join(ROOT, step.file));
      for (const symbol of step.symbols) assert.ok(defines(source, symbol), `${step.file} defines ${symbol}`);
    }
  });

  it('every other file it mentions exists (under src/, or src/lib/ for a lib folder’s file)', function () {
    const missing: string[] = [];
    for (const m of section.matchAll(/`([\w./-]+\.ts)`/g)) {
      const mentioned = m[1] ?? '';
      const candidates = [path.join(ROOT, mentioned), path.join(SRC, mentioned), path.join(SRC, 'lib', mentioned), path.join(SRC, 'lib/consume', mentioned)];
      // A bare file name belongs to the folder of a step that mentions it.
      for (const step of steps) candidates.push(path.join(ROOT, path.dirname(step.file), mentioned));
      if (!candidates.some((c) => existsSync(c))) missing.push(mentioned);
    }
    assert.deepEqual(missing, []);
  });

  it('no file on the walk imports one before it: the walk never leads back into a file it left', function () {
    const files = steps.map((s) => path.join(ROOT, s.file));
    const back: string[] = [];
    files.forEach((file, at) => {
      const earlier = new Set(files.slice(0, at));
      for (const { target, names } of valueImports(file)) {
        const reached = target.endsWith(`${path.sep}index.ts`) ? names.map((n) => reexportedFrom(target, n)) : [target];
        for (const to of reached) if (to !== undefined && earlier.has(to)) back.push(`${path.relative(ROOT, file)} imports ${path.relative(ROOT, to)}`);
      }
    });
    assert.deepEqual(back, []);
  });

  it('finds what the checks look for (a check that cannot fail is no check)', function () {
    assert.ok(defines('export class A {\n  private b(): void {}\n}', 'A.b'));
    assert.ok(!defines('export class A {\n  c(): void {}\n}', 'A.b'));
    assert.ok(!defines('export function other() {}', 'A'));
    const walk = walkSteps('## The walk of one message\n\n1. **`a.ts`** (`A`) — one\n2. **`b.ts`** (`B.c`) — two\n\n## Next');
    assert.deepEqual(walk.steps.map((s) => [s.file, s.symbols]), [['a.ts', ['A']], ['b.ts', ['B.c']]]);
  });
});
