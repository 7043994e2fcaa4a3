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
  oneOfProblem,
  managementUrlProblem,
  routingKeysProblem,
  utf8Length,
  type Problem,
} from '../lib/rules/property-rules';
import { ENV_FIELDS, resolveConnectTargets } from '../lib/connection/settings';
export { argumentValueText } from '../lib/topology/diff';
import { parseDelays, parseQueueArguments, queueNamesOf } from '../lib/topology/parse';
import type { EditorNode, EditorRED, JQStatic, ValidateOptions, Validator } from './red';
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

/** The broker fields whose typedInput offers the `env` type. */
export const envFields = ENV_FIELDS;

export { isEnvReference, queueNamesOf };

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
