/**
 * docs/architecture.md's "walk of one message", kept true: the files it names in order exist, there
 * are at most eight and each is named once, each defines what its step names, every other file the
 * walk mentions exists, and no file on the walk imports a file before it (directly, or through a
 * folder's index by a name that file defines), listens to an event a file after it emits, or calls
 * (on anything but itself) a member a step before it names: the walk never leads back into a file it
 * left. What a step reports goes forward, to observers off the walk (docs/architecture.md names them).
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

/** The events a file's code emits and listens to, by name (`.emit('x'`, `.on('x'`, `.once('x'`, …). */
export function eventsIn(source: string): { emits: Set<string>; listens: Set<string> } {
  const names = (pattern: RegExp): Set<string> => new Set([...source.matchAll(pattern)].map((m) => m[1] ?? ''));
  return {
    emits: names(/\.emit\(\s*['"`](\w+)['"`]/g),
    listens: names(/\.(?:on|once|addListener|prependListener|prependOnceListener)\(\s*['"`](\w+)['"`]/g),
  };
}

/** The members a file's code calls on anything but itself (`x.member(`, `x?.member(`; not `this.member(`). */
export function callsIn(source: string): Set<string> {
  return new Set([...source.matchAll(/(\w+|\)|\])\??\.(\w+)\s*\(/g)].filter((m) => m[1] !== 'this' && m[1] !== 'super').map((m) => m[2] ?? ''));
}

/** Whether a file's code declares a member of this name (a class's, an interface's or a type literal's). */
export function declaresMember(source: string, member: string): boolean {
  return new RegExp(`(?:\\n\\s+(?:(?:private|readonly|async|get|static|public|protected)\\s+)*|[{;,]\\s*)${member}\\??\\s*[(<:=]`).test(source);
}

/**
 * What leads back along a walk, besides imports: a step that listens to an event a step after it
 * emits (the later step's report would run back into it), and a step that calls a member a step
 * before it names in brackets (`Class.member`: an injected object or callback of an earlier step)
 * and does not declare itself (a member of the same name of its own class, interface or type).
 */
export function runsBack(walk: Array<{ file: string; symbols: string[]; source: string }>): string[] {
  const back: string[] = [];
  walk.forEach((step, at) => {
    const { listens } = eventsIn(step.source);
    walk.slice(at + 1).forEach((later) => {
      for (const name of eventsIn(later.source).emits) if (listens.has(name)) back.push(`${step.file} listens to '${name}', which ${later.file} emits`);
    });
    const calls = callsIn(step.source);
    walk.slice(0, at).forEach((earlier) => {
      for (const symbol of earlier.symbols) {
        const member = symbol.split('.')[1];
        if (member !== undefined && calls.has(member) && !declaresMember(step.source, member)) back.push(`${step.file} calls ${symbol} of ${earlier.file}`);
      }
    });
  });
  return back;
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

  it('no file on the walk listens to an event of a file after it, or calls a member of a file before it', function () {
    const walk = steps.map((s) => ({ file: s.file, symbols: s.symbols, source: code(path.join(ROOT, s.file)) }));
    assert.deepEqual(runsBack(walk), []);
  });

  it('finds an event or an injected call that runs back (a check that cannot fail is no check)', function () {
    const walk = [
      { file: 'one.ts', symbols: ['One.arrived'], source: "this.emit('message', m);\nthis.arrived(m);" },
      { file: 'two.ts', symbols: ['Two.settle'], source: "deliveries.on('message', send);\nsettles.on('settled', count);\nthis.settle(id);" },
      { file: 'three.ts', symbols: ['Three.execute'], source: "events.emit('settled', s);\nthis.options.intake.arrived(m);\nthis.options.settler?.execute(e);" },
    ];
    assert.deepEqual(runsBack(walk), ["two.ts listens to 'settled', which three.ts emits", 'three.ts calls One.arrived of one.ts']);
    assert.deepEqual(eventsIn("x.once('a', f); y.emit(\"b\")"), { emits: new Set(['b']), listens: new Set(['a']) });
    assert.ok(declaresMember('class A {\n  private arrived(m: M): void {}\n}', 'arrived'));
    assert.ok(declaresMember('function f(acks: { arrived(m: M): void }) {}', 'arrived'));
    assert.ok(!declaresMember('acks.arrived(m);', 'arrived'));
    assert.deepEqual([...callsIn('this.own(); super.base(); a.b.c(); d?.e(1); f().g()')], ['c', 'e', 'g']);
  });

  it('finds what the checks look for (a check that cannot fail is no check)', function () {
    assert.ok(defines('export class A {\n  private b(): void {}\n}', 'A.b'));
    assert.ok(!defines('export class A {\n  c(): void {}\n}', 'A.b'));
    assert.ok(!defines('export function other() {}', 'A'));
    const walk = walkSteps('## The walk of one message\n\n1. **`a.ts`** (`A`) — one\n2. **`b.ts`** (`B.c`) — two\n\n## Next');
    assert.deepEqual(walk.steps.map((s) => [s.file, s.symbols]), [['a.ts', ['A']], ['b.ts', ['B.c']]]);
  });
});
