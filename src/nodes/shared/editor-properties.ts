/**
 * The dialogs' side of the node property tables (each node's properties.ts): a number property's
 * default and range, the values a choice property shared by several dialogs accepts, and a saved
 * node's property version, so a dialog cannot accept what the runtime refuses. Browser code, bundled
 * into resources/editor.js with the dialogs that use it: it imports single pure files, and the
 * editor's toolkit (src/editor) below it.
 */
import { fail, problemText, type EditorNode, type Validator } from '../../editor/index';
import type { JQStatic } from '../../editor/red';
import { type NumberField } from '../../lib/rules/number-fields';
import { numberProblem } from '../../lib/rules/property-rules';
import { PARTITION_ROUTINGS } from '../../lib/topology/partitions';
import { EXCHANGE_TYPES } from '../../lib/topology/plan';
import { missingProperties, savedVersion, TOPOLOGY_MODES, type PropertyVersions } from './properties';

declare const $: JQStatic;

/** A number property's validator, by the runtime's own table (the node's `properties.ts`). */
export function numberValidator(field: NumberField): Validator {
  return function (value, opt) {
    const problem = numberProblem(value, field);
    return problem ? fail(opt, problemText(problem)) : true;
  };
}

/** A number property's `defaults` entry (its field in the node's table): the runtime's fallback as the value, its range as the validator. */
export function numberProperty(field: NumberField, label: string): { value: number; label: string; validate: Validator } {
  return { value: field.fallback, label, validate: numberValidator(field) };
}

/** Values the runtime accepts for choice properties several dialogs have (a node's own are in its `properties.ts`). */
export const choices = {
  exchangeTypes: EXCHANGE_TYPES,
  partitionRoutings: PARTITION_ROUTINGS,
  topologyModes: TOPOLOGY_MODES,
};

/**
 * A node type's `defaults` with its `version` property, and validators that accept a property an
 * older saved node does not have yet (the dialog fills it in: see `migrate`).
 */
export function withVersion<T extends Record<string, { value: unknown; validate?: Validator }>>(table: PropertyVersions, defaults: T): T {
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
export function migrate(node: EditorNode, versions: PropertyVersions, numbers: Record<string, NumberField>, prefix: 'node-input' | 'node-config-input'): void {
  for (const [name, value] of Object.entries(missingProperties(versions, numbers, node))) $(`#${prefix}-${name}`).val(value);
  $(`#${prefix}-version`).val(String(versions.version));
}
