/**
 * Skipping with a reason the end of the run repeats: `skipBecause(this, 'no chromium at …')` in a hook
 * skips its suite, in a test that test. The reason is kept on the skipped suite or test itself (mocha's
 * own objects); test/helpers/skip-summary.ts reads it back after the run and prints, below mocha's
 * summary, which groups of tests were skipped and why.
 */
import { chromiumMissing } from '../../scripts/services.mjs';

/** A mocha suite or test that may carry the reason it was skipped. */
export interface Skippable {
  title: string;
  skipReason?: string;
  parent?: Skippable | undefined;
}

/** Why the tests of the management API's default address skip against a broker whose API is elsewhere. */
export const MGMT_ELSEWHERE = "the broker's management API is not at port 15672 of its host (RabbitMQ 4 beside the host's broker): the default it falls back to cannot be shown";

export function skipBecause(ctx: Mocha.Context, reason: string): never {
  const runnable = ctx.test;
  const target: Skippable | undefined = (runnable as { type?: string } | undefined)?.type === 'hook' ? runnable?.parent : runnable;
  if (target) target.skipReason = reason;
  ctx.skip();
}

/**
 * For the browser tests' `before`: skips their suite on a developer machine without chromium, fails
 * it under CI=true (.ci/run installs chromium), does nothing when chromium is there.
 */
export function needChromium(ctx: Mocha.Context): void {
  const missing = chromiumMissing(process.env);
  if (!missing) return;
  if (process.env.CI === 'true') throw new Error(`${missing} (CI=true: the browser tests must run; .ci/run installs it)`);
  skipBecause(ctx, missing);
}
