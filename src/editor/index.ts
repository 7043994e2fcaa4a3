/**
 * The editor's shared helpers: every node's .html uses these instead of its own copy. The build
 * bundles this file with the pure rules it imports from src/lib into resources/editor.js
 * (scripts/build-editor.mjs), which Node-RED serves at resources/<package>/editor.js; the bundle
 * sets `window.RabbitmqRetry`. Browser code: no Node.js API here or in what it imports.
 */
import {
  contentTypeProblem,
  envNameProblem,
  isEnvReference,
  nameProblem,
  numberProblem,
  oneOfProblem,
  managementUrlProblem,
  routingKeysProblem,
  utf8Length,
  type Problem,
} from '../lib/rules/property-rules';
import { ENV_FIELDS, resolveConnectTargets } from '../lib/connection/settings';
import { type NumberField } from '../lib/rules/number-fields';
import { missingProperties, savedVersion, TOPOLOGY_MODES, type PropertyVersions } from '../nodes/shared/properties';
import { EXCHANGE_TYPES } from '../lib/topology/plan';
import { PARTITION_ROUTINGS } from '../lib/topology/partitions';
export { argumentValueText } from '../lib/topology/diff';
import { parseDelays, parseQueueArguments, queueNamesOf } from '../lib/topology/parse';
import type { EditorNode, EditorRED, JQStatic, ValidateOptions, Validator } from './red';
export { topologyProblemsOf } from '../nodes/shared/topology-definition';
export { showReasons } from './reasons';

export const PACKAGE = 'node-red-contrib-rabbitmq-retry';

declare const RED: EditorRED;
declare const $: JQStatic;

export * as rules from '../lib/rules/property-rules';

export type Translate = (key: string, args?: Record<string, unknown>) => string;
export type { EditorNode, ValidateOptions, Validator } from './red';

/** The translator for one node type's catalog: `t("label.name")`. */
export function i18n(type: string): Translate {
  return (key, args) => RED._(`${PACKAGE}/${type}:${type}.${key}`, args);
}

/** A validator's answer: false for the red mark, or the message when Node-RED asks for one. */
export function fail(opt: ValidateOptions | undefined, text: string): string | false {
  if (!opt) return false;
  return opt.label ? `${opt.label}: ${text}` : text;
}

/** A problem in the user's language: `common.errors.<code>` of the catalogs, else its English text. */
export function problemText(problem: Problem): string {
  const key = `common.errors.${problem.code}`;
  const text = RED._(`${PACKAGE}/retry-broker:${key}`, problem.params);
  return text === '' || text.endsWith(key) ? problem.text : text;
}

/** A property's value as trimmed text ('' for anything but a string or a number). */
export function str(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '';
}

/** A validator from a rule; an empty value passes (`required` says when it may not). */
export function rule(check: (this: EditorNode, value: string) => Problem | null, options: { allowEnv?: boolean } = {}): Validator {
  return function (this: EditorNode, value, opt) {
    const text = str(value);
    if (text === '' || (options.allowEnv && isEnvReference(text))) return true;
    const problem = check.call(this, text);
    return problem ? fail(opt, problemText(problem)) : true;
  };
}

export const validators = {
  /** A number property, by the runtime's own table (the node's `properties.ts`). */
  number: (field: NumberField): Validator => {
    return function (value, opt) {
      const problem = numberProblem(value, field);
      return problem ? fail(opt, problemText(problem)) : true;
    };
  },
  oneOf: (values: readonly string[]): Validator =>
    function (value, opt) {
      const problem = oneOfProblem(value, values);
      return problem ? fail(opt, problemText(problem)) : true;
    },
  /** A queue or exchange name, with an optional rule that looks at other properties (`this`). */
  name: (extra?: (this: EditorNode, value: string) => Problem | null): Validator =>
    rule(function (value) {
      return nameProblem(value) ?? (extra ? extra.call(this, value) : null);
    }),
  routingKeys: rule(routingKeysProblem),
  /** The broker URL (one, or a cluster's list), read by the runtime's own parser. */
  brokerUrl: rule(
    (value) => {
      try {
        resolveConnectTargets({ url: value, host: 'localhost', port: 5672, vhost: '/', tls: false, heartbeat: 30 });
        return null;
      } catch (err) {
        return { code: 'brokerUrl', params: { error: (err as Error).message }, text: (err as Error).message };
      }
    },
    { allowEnv: true },
  ),
  managementUrl: rule(managementUrlProblem),
  contentType: rule(contentTypeProblem),
  /** At most 255 bytes (an AMQP short string), e.g. a routing key. */
  shortString: rule((value) => (utf8Length(value) > 255 ? { code: 'tooLong', text: 'longer than 255 bytes' } : null)),
  delays: ((): Validator => {
    const check = rule(
      (value) => {
        try {
          parseDelays(value);
          return null;
        } catch (err) {
          return { code: 'delays', text: (err as Error).message };
        }
      },
      { allowEnv: true },
    );
    // Unlike other fields an empty delay is a mistake, not "the default".
    return function (value, opt) {
      return str(value) === '' ? fail(opt, problemText({ code: 'delays', text: 'retry delay is empty' })) : check.call(this, value, opt);
    };
  })(),
  queueArguments: rule((value) => {
    try {
      parseQueueArguments(value, 'arguments');
      return null;
    } catch (err) {
      return { code: 'queueArguments', params: { error: (err as Error).message }, text: (err as Error).message };
    }
  }),
};

/**
 * A field with a typedInput of types `str` and `env` (its type in the hidden `<field>Type` input, as the
 * core nodes keep it): an env value must name a variable, a text value goes to `text`. The dialog's
 * type counts while it is open, the saved one otherwise.
 */
export function envOr(field: string, text: Validator, prefix: 'node-input' | 'node-config-input' = 'node-config-input'): Validator {
  return function (this: EditorNode, value, opt) {
    const typeInput = $(`#${prefix}-${field}Type`);
    const type = typeInput.length > 0 ? typeInput.val() : this[`${field}Type`];
    if (type !== 'env') return text.call(this, value, opt);
    const problem = envNameProblem(str(value));
    return problem ? fail(opt, problemText(problem)) : true;
  };
}

/** The dialog's typedInput for a field that may come from the environment (see `envOr`). */
export function envInput(field: string, prefix: 'node-input' | 'node-config-input' = 'node-config-input'): void {
  $(`#${prefix}-${field}`).typedInput({
    default: 'str',
    types: ['str', 'env'],
    typeField: `#${prefix}-${field}Type`,
  });
}

/** How a label shows a field that names an environment variable: `${NAME}`, never its value. */
export function envLabel(value: unknown, type: unknown): string {
  const text = str(value);
  return type === 'env' && !isEnvReference(text) ? `\${${text}}` : text;
}

/** A number property's `defaults` entry (its field in the node's table): the runtime's fallback as the value, its range as the validator. */
export function numberProperty(field: NumberField, label: string): { value: number; label: string; validate: Validator } {
  return { value: field.fallback, label, validate: validators.number(field) };
}

/** Values the runtime accepts for choice properties several dialogs have (a node's own are in its `properties.ts`). */
export const choices = {
  exchangeTypes: EXCHANGE_TYPES,
  partitionRoutings: PARTITION_ROUTINGS,
  topologyModes: TOPOLOGY_MODES,
};

/** The broker fields whose typedInput offers the `env` type. */
export const envFields = ENV_FIELDS;

export { isEnvReference, queueNamesOf };

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

/**
 * Fills a select with the values the runtime accepts (labels from `label`), then selects the
 * node's value: the options are not in the template, so Node-RED's own fill-in found none.
 */
export function fillSelect(selector: string, values: readonly string[], label: (value: string) => string, selected: unknown): void {
  const select = $(selector).empty();
  for (const value of values) select.append($('<option>').attr('value', value).text(label(value)));
  const current = typeof selected === 'string' && values.includes(selected) ? selected : values[0];
  if (current !== undefined) select.val(current);
}

/**
 * Tabs in a dialog, as the core mqtt-broker dialog has them: `<ul id="{id}">` and a
 * `<div id="{id}-content">` whose children are the tabs' panes, named by the tabs' ids.
 */
export function tabs(id: string, panes: { id: string; label: string }[]): void {
  const created = RED.tabs.create({
    id,
    onchange(tab) {
      $(`#${id}-content`).children().hide();
      $(`#${tab.id}`).show();
    },
  });
  for (const pane of panes) created.addTab(pane);
}
