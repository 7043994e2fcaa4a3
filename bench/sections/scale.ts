/** Many consumers, competing consumers, a large backlog (lib/scale-scenarios.ts). */
import { runScale } from '../lib/scale-scenarios';
import { REPS, SMOKE, log } from '../config';
import type { Bench } from '../types';

export function scale(b: Bench): Promise<void> {
  return runScale({ smoke: SMOKE, reps: REPS, ctx: b.ctx, names: b.names, log }, b.results.scale);
}
