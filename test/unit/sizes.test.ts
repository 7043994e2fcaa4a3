/**
 * Sizes a reader can take in: no file in src/ or bench/ over 300 lines, no function over 80 (the
 * TypeScript compiler's own parse finds the functions: declarations, methods, arrows, accessors).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;
/** Over the limit today, to be split; each may not grow. */
const KNOWN_LONG_FILES: Record<string, number> = {};

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    if (statSync(file).isDirectory()) return sourcesUnder(file);
    return /\.(ts|cjs|mjs)$/.test(entry) ? [file] : [];
  });
}

/** Lines as `wc -l` counts them. */
export function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** Every function of a source text longer than `max` lines: `name (N lines, from line L)`. */
export function longFunctions(fileName: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
      if (lines > max) found.push(`${name} (${lines} lines, from line ${first + 1})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const files = ['src', 'bench'].flatMap((dir) => sourcesUnder(path.join(ROOT, dir)));

describe('sizes of src/ and bench/', function () {
  this.timeout(30_000);

  it('finds a function over the limit, and counts lines as wc -l does', function () {
    const body = Array.from({ length: 81 }, (_v, i) => `  const a${i} = ${i};`).join('\n');
    assert.deepEqual(longFunctions('x.ts', `export function long(): void {\n${body}\n}\nconst short = () => 1;\n`, 80), ['long (83 lines, from line 1)']);
    assert.deepEqual(longFunctions('x.ts', 'class A {\n  m(): number {\n    return 1;\n  }\n}\n', 80), []);
    assert.equal(lineCount('a\nb\n'), 2);
    assert.equal(lineCount('a\nb'), 2);
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, function () {
    const long = files
      .map((file) => ({ rel: path.relative(ROOT, file), lines: lineCount(readFileSync(file, 'utf8')) }))
      .filter(({ rel, lines }) => lines > (KNOWN_LONG_FILES[rel] ?? MAX_FILE_LINES))
      .map(({ rel, lines }) => `${rel}: ${lines} lines`);
    assert.deepEqual(long, [], 'split the file by what its parts do');
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, function () {
    const long = files.flatMap((file) => longFunctions(file, readFileSync(file, 'utf8'), MAX_FUNCTION_LINES).map((fn) => `${path.relative(ROOT, file)}: ${fn}`));
    assert.deepEqual(long, [], 'split the function into named steps');
  });
});
