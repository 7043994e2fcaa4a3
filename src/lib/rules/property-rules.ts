/**
 * The rules a node property follows, in one place for the runtime and the editor: the build bundles
 * this module into the editor script (scripts/build-editor.mjs), so a dialog cannot accept what the
 * runtime rejects. Pure, and free of Node.js APIs (it runs in the browser too).
 */

import { readNumberField, type NumberField } from './number-fields';
import { regExpLiteral } from './regexp-literal';

/**
 * A problem with a value. `code` names the editor's translated text (`common.errors.<code>` in the
 * catalogs) and `params` fills it; `text` is the same in English for the runtime's logs.
 */
export interface Problem {
  code: string;
  params?: Record<string, string | number>;
  text: string;
}

const ENV_REFERENCE = /^\$\{[^}]*\}$/;

/** True for a Node-RED `${VAR}` reference: resolved by Node-RED at deploy, empty when the variable is unset. */
export function isEnvReference(value: string): boolean {
  return ENV_REFERENCE.test(value.trim());
}

/**
 * The value of a typedInput of type `env`: a variable's name (or `${NAME}`), as the core nodes take
 * it; Node-RED reads it from the flow's, the group's or the process's environment.
 */
export function envNameProblem(raw: string): Problem | null {
  const name = raw.trim().replace(/^\$\{(.*)\}$/, '$1');
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? null : { code: 'envName', text: 'must be the name of an environment variable, e.g. AMQP_URL' };
}

/** Bytes of the UTF-8 encoding: AMQP limits names (short strings) to 255 bytes, not characters. */
export function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

export function oneOfProblem(value: unknown, values: readonly string[]): Problem | null {
  if (typeof value === 'string' && values.includes(value)) return null;
  return { code: 'oneOf', params: { values: values.join(', ') }, text: `must be one of ${values.join(', ')}` };
}

/**
 * A number field checked with its NUMBER_FIELDS entry (number-fields.ts, the runtime's reader): empty
 * is fine (the runtime uses the fallback), anything else must fit the range.
 */
export function numberProblem(value: unknown, field: NumberField): Problem | null {
  const read = readNumberField(value, field);
  if (!('problem' in read)) return null;
  const params: Record<string, number> = {};
  if (field.min !== undefined) params.min = field.min;
  if (field.max !== undefined) params.max = field.max;
  const code = `${field.integer ? 'integer' : 'number'}${field.min !== undefined ? 'Min' : ''}${field.max !== undefined ? 'Max' : ''}`;
  return { code, params, text: read.problem };
}

/** A queue or exchange name: at most 255 bytes and not starting with `amq.`; empty is left to the caller. */
export function nameProblem(name: string): Problem | null {
  if (name.startsWith('amq.')) return { code: 'reserved', text: "names starting with 'amq.' are reserved by RabbitMQ" };
  if (utf8Length(name) > 255) return { code: 'tooLong', text: 'longer than 255 bytes' };
  return null;
}

/** Comma-separated binding keys, trimmed, empty ones dropped. */
export function parseRoutingKeys(text: string): string[] {
  return text
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
}

export function routingKeysProblem(text: string): Problem | null {
  return parseRoutingKeys(text).some((k) => utf8Length(k) > 255) ? { code: 'tooLong', text: 'a routing key is longer than 255 bytes' } : null;
}

/** The management API URL: empty, `${VAR}`, or one http(s) URL (ManagementApi reads it so). */
export function managementUrlProblem(raw: string): Problem | null {
  const text = raw.trim();
  if (text === '' || isEnvReference(text)) return null;
  let ok = /^https?:\/\/\S+$/.test(text) && !text.includes(',');
  try {
    ok &&= new URL(text).hostname !== '';
  } catch {
    ok = false;
  }
  return ok ? null : { code: 'managementUrl', text: 'management API URL must be one http:// or https:// URL (a password with / : @ percent-encoded)' };
}

/** A MIME type such as `application/json` or `text/plain; charset=utf-8`; empty means implied by the payload. */
export function contentTypeProblem(raw: string): Problem | null {
  const text = raw.trim();
  if (text === '' || /^[^\s/]+\/[^\s/;]+(\s*;.*)?$/.test(text)) return null;
  return { code: 'contentType', text: 'content type must look like application/json or text/plain' };
}

/**
 * A reason filter (park-replay): written `/…/flags` a regular expression, else a case-insensitive part
 * of the reason. The expression, or the problem with it; undefined for a part of the text.
 */
export function reasonExpression(value: string): RegExp | Problem | undefined {
  try {
    // Any lowercase letters as flags: `/x/q` is an invalid expression, not a part of a reason.
    return regExpLiteral(value.trim(), 'letters');
  } catch (err) {
    return { code: 'regex', text: `invalid regular expression: ${(err as Error).message}` };
  }
}

/** What is wrong with a reason filter, or null (any text is a part of a reason; only an expression can be invalid). */
export function reasonFilterProblem(value: string): Problem | null {
  const read = reasonExpression(value);
  return read !== undefined && !(read instanceof RegExp) ? read : null;
}
