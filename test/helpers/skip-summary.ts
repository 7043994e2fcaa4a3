/**
 * A mocha root-hook plugin (.mocharc.json `require`): after the run, below mocha's own summary (which
 * CI reads, left as it is), one line per reason tests were skipped, naming the groups skipped for it —
 * e.g. `skipped: editor in a real browser (…) (12 tests): no chromium at /usr/bin/chromium: …`.
 * Reasons come from skipBecause (test/helpers/skips.ts); a plain this.skip() shows as "no reason given".
 */
import { writeSync } from 'node:fs';
import type { Skippable } from './skips';

interface Node extends Skippable {
  tests?: Array<Node & { isPending(): boolean; state?: string }>;
  suites?: Node[];
  root?: boolean;
}

export interface SkippedGroup {
  reason: string;
  /** The titles of the suites (or tests) the reason was given for, with how many tests each. */
  groups: Array<{ title: string; tests: number }>;
}

/** Where a skipped test's reason was given: the test itself or its nearest suite that has one; else its file's top suite. */
function reasonOf(test: Node): { reason: string; where: Node } {
  for (let node: Node | undefined = test; node; node = node.parent) {
    if (node.skipReason !== undefined) return { reason: node.skipReason, where: node };
  }
  let top: Node = test;
  while (top.parent && !(top.parent as Node).root) top = top.parent;
  return { reason: 'no reason given', where: top };
}

/** Every skipped test under `root`, grouped by reason, then by the suite the reason was given for. */
export function skippedGroups(root: Node): SkippedGroup[] {
  const byReason = new Map<string, Map<Node, number>>();
  const walk = (suite: Node): void => {
    for (const test of suite.tests ?? []) {
      if (!test.isPending() || test.state === 'passed' || test.state === 'failed') continue;
      const { reason, where } = reasonOf(test);
      const groups = byReason.get(reason) ?? new Map<Node, number>();
      groups.set(where, (groups.get(where) ?? 0) + 1);
      byReason.set(reason, groups);
    }
    for (const child of suite.suites ?? []) walk(child);
  };
  walk(root);
  return [...byReason].map(([reason, groups]) => ({ reason, groups: [...groups].map(([node, tests]) => ({ title: node.title, tests })) }));
}

/** The summary's lines: one per reason. */
export function skippedLines(groups: SkippedGroup[]): string[] {
  return groups.map(({ reason, groups: of }) => {
    const tests = (n: number): string => `${n} test${n === 1 ? '' : 's'}`;
    return `  skipped: ${of.map((g) => `${g.title} (${tests(g.tests)})`).join(', ')}: ${reason}`;
  });
}

let rootSuite: Node | undefined;

export const mochaHooks = {
  beforeAll(this: Mocha.Context): void {
    rootSuite = this.test?.parent;
  },
};

export function mochaGlobalTeardown(): void {
  if (!rootSuite) return;
  const lines = skippedLines(skippedGroups(rootSuite));
  // Written synchronously: mocha exits (--exit) right after the teardown.
  if (lines.length > 0) writeSync(1, `${lines.join('\n')}\n\n`);
}
