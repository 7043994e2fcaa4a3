/**
 * Reads number fields and says what is wrong with them: a value the runtime cannot use is refused
 * with the field named, never silently replaced by a default. The node types' tables of fields live
 * with the nodes (src/nodes/shared/properties.ts). Pure: the editor runs it too.
 */

/** The longest timer Node.js keeps: a longer setTimeout fires at once. */
export const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

export interface NumberField {
  /** How the editor labels the field, e.g. `prefetch`, `settle timeout`. */
  label: string;
  /** Used when the field is missing or empty (an older flow, a field left blank). */
  fallback: number;
  min?: number;
  max?: number;
  integer?: boolean;
  /** Shown after the range, e.g. `s`. */
  unit?: string;
}

export type NumberValues<T> = { [K in keyof T]: number };

function rangeText(field: NumberField): string {
  const kind = field.integer ? 'a whole number' : 'a number';
  const unit = field.unit ? ` ${field.unit}` : '';
  if (field.min !== undefined && field.max !== undefined) return `${kind} from ${field.min} to ${field.max}${unit}`;
  if (field.min !== undefined) return `${kind} of at least ${field.min}${unit}`;
  if (field.max !== undefined) return `${kind} of at most ${field.max}${unit}`;
  return kind;
}

/** One field: its number, or the sentence that explains why the value cannot be used. */
export function readNumberField(value: unknown, field: NumberField): { value: number } | { problem: string } {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return { value: field.fallback };
  const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : Number.NaN;
  const shown = typeof value === 'string' ? `'${value}'` : typeof value === 'number' ? String(value) : JSON.stringify(value);
  const fits =
    Number.isFinite(number) &&
    (!field.integer || Number.isInteger(number)) &&
    (field.min === undefined || number >= field.min) &&
    (field.max === undefined || number <= field.max);
  return fits ? { value: number } : { problem: `${field.label} is ${shown}: must be ${rangeText(field)}` };
}

/** Every field of `fields` read from `def` (keys are the definition's property names). */
export function readNumberFields<T extends Record<string, NumberField>>(def: Record<string, unknown>, fields: T): { values: NumberValues<T>; problems: string[] } {
  const values = {} as NumberValues<T>;
  const problems: string[] = [];
  for (const key of Object.keys(fields) as Array<keyof T & string>) {
    const field = fields[key] as NumberField;
    const read = readNumberField(def[key], field);
    if ('problem' in read) {
      problems.push(read.problem);
      values[key] = field.fallback;
    } else {
      values[key] = read.value;
    }
  }
  return { values, problems };
}
