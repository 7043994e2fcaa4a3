/**
 * retry-console's properties: its number fields and its settings read from its saved definition. The runtime reads its flow with them, the dialog validates and fills in
 * with the same tables (bundled into the editor's script). Pure: the editor runs it too.
 */
import { MAX_TIMER_SECONDS, readNumberField, type NumberField } from '../../lib/rules/number-fields';

export const CONSOLE_NUMBERS = {
  every: { label: 'every', fallback: 10, min: 0, max: MAX_TIMER_SECONDS, unit: 's' },
  minutes: { label: 'history', fallback: 60, min: 1, max: 1440, integer: true, unit: 'minutes' },
} as const satisfies Record<string, NumberField>;

/** The node's settings, read from its saved definition. */
export interface ConsoleSettings {
  /** Seconds between its msgs (0: only when asked); 0 with a bad value. */
  every: number;
  /** Minutes of history it sends. */
  minutes: number;
  /** The history's series it sends unless a msg names its own (empty: all). */
  series: string[];
  /** What is wrong with its numbers (the first), if anything. */
  problem: string | undefined;
}

export function consoleSettings(def: Record<string, unknown>): ConsoleSettings {
  const readEvery = readNumberField(def.every, CONSOLE_NUMBERS.every);
  const readMinutes = readNumberField(def.minutes, CONSOLE_NUMBERS.minutes);
  const problem = [readEvery, readMinutes].map((r) => ('problem' in r ? r.problem : undefined)).find((p) => p !== undefined);
  return {
    every: 'value' in readEvery ? readEvery.value : 0,
    minutes: 'value' in readMinutes ? readMinutes.value : CONSOLE_NUMBERS.minutes.fallback,
    series: typeof def.series === 'string' ? def.series.split(',').map((name) => name.trim()) : [],
    problem,
  };
}
