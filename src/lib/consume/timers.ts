/** Timers a consumer's parts arm (the re-check's, a batch's wait), injectable for unit tests. */

/** Arms and disarms a timer. */
export interface Timers {
  set(due: () => void, ms: number): unknown;
  clear(timer: unknown): void;
}

export const realTimers: Timers = {
  set: (due, ms) => setTimeout(due, ms),
  clear: (timer) => clearTimeout(timer as NodeJS.Timeout | undefined),
};
