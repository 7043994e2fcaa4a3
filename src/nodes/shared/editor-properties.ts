/**
 * The dialogs' side of the node property tables (properties.ts): a number property's default and
 * range, the values a choice property accepts, and a saved node's property version, so a dialog
 * cannot accept what the runtime refuses. Browser code, bundled into resources/editor.js with the
 * dialogs that use it: it imports single pure files, and the editor's toolkit (src/editor) below it.
 */
import { fail, problemText, type EditorNode, type Validator } from '../../editor/index';
import type { JQStatic } from '../../editor/red';
import { type NumberField } from '../../lib/rules/number-fields';
import { numberProblem } from '../../lib/rules/property-rules';
import { PARTITION_ROUTINGS } from '../../lib/topology/partitions';
import { EXCHANGE_TYPES } from '../../lib/topology/plan';
import {
  CONSUMER_MODES,
  DECODE_MODES,
  DEDUPE_KINDS,
  DEDUPE_NO_KEY,
  DEDUPE_STORE_DOWN,
  INVALID_BODY_ACTIONS,
  missingProperties,
  NUMBER_FIELDS,
  PARK_NODE_ACTIONS,
  PROPERTY_VERSIONS,
  PUBLISH_MODES,
  savedVersion,
  SETTLE_ACTIONS,
  TOPOLOGY_MODES,
} from './properties';

declare const $: JQStatic;

/** A number property's validator, by the runtime's own table (NUMBER_FIELDS). */
export function numberValidator(type: keyof typeof NUMBER_FIELDS, name: string): Validator {
  const field = (NUMBER_FIELDS[type] as Record<string, NumberField | undefined>)[name];
  if (!field) throw new Error(`no number field ${type}.${name}`);
  return function (value, opt) {
    const problem = numberProblem(value, field);
    return problem ? fail(opt, problemText(problem)) : true;
  };
}

/** A number property's `defaults` entry: the runtime's fallback as the value, its range as the validator. */
export function numberProperty(type: keyof typeof NUMBER_FIELDS, name: string, label: string): { value: number; label: string; validate: Validator } {
  const field = (NUMBER_FIELDS[type] as Record<string, NumberField | undefined>)[name];
  if (!field) throw new Error(`no number field ${type}.${name}`);
  return { value: field.fallback, label, validate: numberValidator(type, name) };
}

/** Values the runtime accepts for choice properties, for the dialogs' selects and validators. */
export const choices = {
  exchangeTypes: EXCHANGE_TYPES,
  partitionRoutings: PARTITION_ROUTINGS,
  decodeModes: DECODE_MODES,
  topologyModes: TOPOLOGY_MODES,
  consumerModes: CONSUMER_MODES,
  invalidBodyActions: INVALID_BODY_ACTIONS,
  settleActions: SETTLE_ACTIONS,
  publishModes: PUBLISH_MODES,
  parkNodeActions: PARK_NODE_ACTIONS,
  dedupeKinds: DEDUPE_KINDS,
  dedupeNoKey: DEDUPE_NO_KEY,
  dedupeStoreDown: DEDUPE_STORE_DOWN,
};

/**
 * A node type's `defaults` with its `version` property, and validators that accept a property an
 * older saved node does not have yet (the dialog fills it in: see `migrate`).
 */
export function withVersion<T extends Record<string, { value: unknown; validate?: Validator }>>(type: string, defaults: T): T {
  const table = PROPERTY_VERSIONS[type];
  if (!table) return defaults;
  const out: Record<string, { value: unknown; validate?: Validator }> = { ...defaults, version: { value: table.version } };
  for (const [name, added] of Object.entries(table.added)) {
    const def = out[name];
    const inner = def?.validate;
    if (!def || !inner) continue;
    out[name] = {
      ...def,
      validate(this: EditorNode, value, opt) {
        return added.since > savedVersion(this) && value === undefined ? true : inner.call(this, value, opt);
      },
    };
  }
  return out as T;
}

/**
 * In oneditprepare: shows what an older saved node's missing properties mean, and sets the hidden
 * `version` input so saving the dialog brings the node up to date.
 */
export function migrate(node: EditorNode, type: string, prefix: 'node-input' | 'node-config-input'): void {
  for (const [name, value] of Object.entries(missingProperties(type, node))) $(`#${prefix}-${name}`).val(value);
  const version = PROPERTY_VERSIONS[type]?.version;
  if (version !== undefined) $(`#${prefix}-version`).val(String(version));
}
