/** The retry configuration's text fields (delays, queue arguments) to values, with errors that name the problem. Pure. */
import type { QueueArguments } from './arguments';

const DELAY_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses retry delays: `3000` (ms), or a comma-separated list with optional units such as
 * `1s, 10s, 1m`. Throws an Error naming the part it cannot read.
 */
export function parseDelays(text: string | number | undefined | null): number[] {
  if (typeof text === 'number') return [text];
  const parts = (text ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length === 0) throw new Error('retry delay is empty');
  return parts.map((part) => {
    const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/i.exec(part);
    if (!match) throw new Error(`retry delay '${part}' is not a duration such as 500, 500ms, 10s, 2m or 1h`);
    return Math.round(Number(match[1]) * (DELAY_UNITS[(match[2] ?? 'ms').toLowerCase()] ?? 1));
  });
}

/**
 * Parses the JSON of extra queue arguments. Numbers stay numbers (`x-message-ttl: 3000`, not "3000").
 * Throws an Error whose message names the problem.
 */
export function parseQueueArguments(text: string | undefined | null, label: string): QueueArguments {
  if (text === undefined || text === null || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${label}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`${label}: must be a JSON object such as {"x-queue-type":"quorum"}`);
  }
  const args: QueueArguments = {};
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (value === null) throw new Error(`${label}: ${key} is null; leave it out instead`);
    if (!['string', 'number', 'boolean'].includes(typeof value)) {
      throw new Error(`${label}: ${key} must be a string, number or boolean`);
    }
    args[key] = value;
  }
  return args;
}

/** The retry and parking queue names a configuration means: empty ones default to `<main>.retry` and `<main>.parking`. */
export function queueNamesOf(mainQueue: string, retryQueue: string, parkingQueue: string): { main: string; retry: string; parking: string } {
  const main = mainQueue.trim();
  return { main, retry: retryQueue.trim() || (main && `${main}.retry`), parking: parkingQueue.trim() || (main && `${main}.parking`) };
}
