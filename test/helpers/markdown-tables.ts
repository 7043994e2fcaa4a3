/** The rows of a markdown table in a page, as cells, for tests that compare a table of the docs with the package. */
import assert from 'node:assert/strict';

/** A table row's cells, split at pipes that are not escaped (`a` \| `b` is one cell); the leading and trailing empty cells kept. */
export function cellsOf(line: string): string[] {
  return line.split(/(?<!\\)\|/).map((cell) => cell.trim());
}

/**
 * The body rows of the first table whose header row matches `header` (after a `## heading` matching
 * `under`, when given), each as its cells without the empty ones outside the outer pipes.
 */
export function tableRows(page: string, header: RegExp, under?: RegExp): string[][] {
  const lines = page.split('\n');
  const from = under === undefined ? 0 : lines.findIndex((line) => /^#+ /.test(line) && under.test(line));
  assert.ok(from >= 0, `a heading matching ${String(under)}`);
  const start = lines.findIndex((line, index) => index >= from && line.startsWith('|') && header.test(line));
  assert.ok(start >= 0, `a table headed ${String(header)}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(cellsOf(line).slice(1, -1));
  }
  return rows;
}

/** The code spans of a cell, in order. */
export function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
}
