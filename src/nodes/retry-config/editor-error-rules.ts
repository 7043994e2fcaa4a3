/**
 * The retry-config dialog's error rules: an ordered, editable list (Node-RED's editableList) of
 * rules — name, what they match, the value, the kind — with a button that adds the starting set for
 * HTTP calls. Each rule is checked by the runtime's own rules (lib/classify/rules.ts, bundled), and a
 * JSONata expression by the editor's JSONata, as the runtime will parse it.
 */
import { ERROR_KINDS, errorRuleProblems, HTTP_STARTING_RULES, RULE_MATCHES, ruleLabel, ruleProblem, type ErrorRule } from '../../lib/classify/rules';
import { fail, str, type EditorNode, type Translate, type Validator } from '../../editor/index';
import type { JQ, JQStatic } from '../../editor/red';

declare const $: JQStatic;
/** The editor's JSONata, when it has it. */
declare const jsonata: ((expression: string) => unknown) | undefined;

const LIST = '#retry-config-error-rules';

/** What is wrong with a rule, the JSONata parse included; undefined when nothing. */
function problemOf(rule: unknown): string | undefined {
  const own = ruleProblem(rule);
  if (own !== undefined) return own;
  const r = rule as ErrorRule;
  if (r.match !== 'jsonata' || typeof jsonata !== 'function') return undefined;
  try {
    jsonata(r.value);
    return undefined;
  } catch (err) {
    return `the expression does not parse: ${(err as Error).message}`;
  }
}

/** The `errorRules` property's validator: every rule as the runtime reads it at deploy. */
export function errorRulesValidator(): Validator {
  return function (this: EditorNode, value, opt) {
    const problems = errorRuleProblems(value);
    if (problems.length === 0 && Array.isArray(value)) {
      value.forEach((rule: unknown, index) => {
        const problem = problemOf(rule);
        if (problem !== undefined) problems.push(`${ruleLabel(index, (rule as ErrorRule).name)} ${problem}`);
      });
    }
    return problems.length === 0 || fail(opt, problems.join('; '));
  };
}

/** One row's rule as typed. */
function ruleOf(row: JQ): ErrorRule {
  return {
    name: str(row.find('.retry-config-rule-name').val()),
    match: str(row.find('.retry-config-rule-match').val()) as ErrorRule['match'],
    value: str(row.find('.retry-config-rule-value').val()),
    kind: str(row.find('.retry-config-rule-kind').val()) as ErrorRule['kind'],
  };
}

/** Marks a row's name or value red with the problem as its tip, as Node-RED marks a field. */
function check(row: JQ): void {
  const rule = ruleOf(row);
  const problem = problemOf(rule);
  const name = row.find('.retry-config-rule-name');
  const value = row.find('.retry-config-rule-value');
  const nameBad = rule.name === '';
  name.toggleClass('input-error', nameBad);
  value.toggleClass('input-error', problem !== undefined && !nameBad);
  value.attr('title', problem ?? '');
}

function select(values: readonly string[], label: (value: string) => string, selected: string, cls: string): JQ {
  const box = $('<select>').addClass(cls);
  for (const value of values) box.append($('<option>').attr('value', value).text(label(value)));
  return box.val(selected);
}

/** Fills the list with the node's rules and wires the starting-set button. */
export function errorRulesEditor(t: Translate, node: EditorNode): void {
  const placeholders = (match: string): string => t(`rules.placeholder.${match}`);
  $(LIST).editableList({
    addButton: t('rules.add'),
    sortable: true,
    removable: true,
    height: 'auto',
    header: $('<div>')
      .addClass('retry-config-rules-header')
      .css({ display: 'flex', gap: '4px', 'padding-left': '28px', 'font-size': '0.9em' })
      .append($('<span>').css('width', '25%').text(t('rules.name')))
      .append($('<span>').css('width', '16%').text(t('rules.match')))
      .append($('<span>').css('width', '29%').text(t('rules.value')))
      .append($('<span>').css('width', '22%').text(t('rules.kind'))),
    addItem(container: JQ, _index: number, data: Partial<ErrorRule>) {
      const row = $('<div>').addClass('retry-config-rule').css({ display: 'flex', gap: '4px', 'align-items': 'center' }).appendTo(container);
      const name = $('<input type="text">').addClass('retry-config-rule-name').css('width', '25%').attr('placeholder', t('rules.name')).val(data.name ?? '');
      const match = select(RULE_MATCHES, (m) => t(`rules.matches.${m}`), data.match ?? 'status', 'retry-config-rule-match').css('width', '16%');
      const value = $('<input type="text">').addClass('retry-config-rule-value').css('width', '29%').val(data.value ?? '');
      const kind = select(ERROR_KINDS, (k) => t(`rules.kinds.${k}`), data.kind ?? 'permanent', 'retry-config-rule-kind').css('width', '22%');
      row.append(name, match, value, kind);
      const refresh = (): void => {
        value.attr('placeholder', placeholders(str(match.val())));
        check(row);
      };
      name.on('change keyup', refresh);
      value.on('change keyup', refresh);
      match.on('change', refresh);
      kind.on('change', refresh);
      refresh();
    },
  });
  const rules = Array.isArray(node.errorRules) ? (node.errorRules as ErrorRule[]) : [];
  for (const rule of rules) $(LIST).editableList('addItem', rule);
  $('#retry-config-rules-http').on('click', () => {
    for (const rule of HTTP_STARTING_RULES) $(LIST).editableList('addItem', { ...rule });
  });
}

/** The rules as the list holds them, in order: what the node saves. */
export function errorRulesOf(): ErrorRule[] {
  const out: ErrorRule[] = [];
  $(LIST)
    .editableList('items')
    .each((_i: number, element: unknown) => {
      out.push(ruleOf($(element)));
    });
  return out;
}
