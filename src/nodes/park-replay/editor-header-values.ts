/**
 * A header value in the parking browser's edit dialog: shown in a typedInput as text with a type
 * (str, num, bool, json) and read back from it. Pure, and free of the editor's globals (unit-tested in Node.js).
 */

export type HeaderType = 'str' | 'num' | 'bool' | 'json';

/** How a header value (as the parking endpoint sends it: JSON-safe) is shown. */
export function headerInput(value: unknown): { type: HeaderType; text: string } {
  if (typeof value === 'string') return { type: 'str', text: value };
  if (typeof value === 'number') return { type: 'num', text: String(value) };
  if (typeof value === 'boolean') return { type: 'bool', text: String(value) };
  return { type: 'json', text: JSON.stringify(value ?? null) };
}

/** The value a header gets from what the dialog shows; throws saying what is wrong with it. */
export function headerValue(name: string, type: string, text: string): unknown {
  if (type === 'str') return text;
  if (type === 'num') {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) throw new Error(`header '${name}': '${text}' is not a number`);
    return n;
  }
  if (type === 'bool') return text === 'true';
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`header '${name}': not JSON`);
  }
}

/** Whether the edit dialog shows a header read-only: the endpoint's locked names and prefixes. */
export function lockedBy(locked: { names: readonly string[]; prefixes: readonly string[] }, name: string): boolean {
  const lower = name.toLowerCase();
  return locked.names.includes(lower) || locked.prefixes.some((prefix) => lower.startsWith(prefix));
}

/** A body shown for editing: JSON pretty-printed when it parses, else as it is. */
export function editableBody(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Why an edited body cannot be replayed, or undefined: a JSON message's body must stay JSON. */
export function bodyProblem(text: string, contentType: string | null | undefined): string | undefined {
  if (!contentType || !/\bjson\b/i.test(contentType)) return undefined;
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
