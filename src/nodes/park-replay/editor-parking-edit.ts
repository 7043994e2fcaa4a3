/**
 * The parking browser's "Edit & replay" of one message: a tray with its body (JSON pretty-printed,
 * or text) and its headers — the editable ones in typedInputs, the locked ones (attempt history,
 * park record, the broker's x- headers, trace context) read-only — and, after a confirmation, the
 * edited copy replayed through POST …/edit. Whether the button is there at all: settings.js's
 * rabbitmqRetry.editParked (GET …/edit) and the user's rabbitmq-retry.write.
 */
import { type Translate } from '../../editor/index';
import type { EditorRED, JQ, JQStatic } from '../../editor/red';
import { bodyProblem, editableBody, headerInput, headerValue, lockedBy } from './editor-header-values';
import { askThen, failureText, url, type Failure, type InTurn, type ParkedMessage } from './editor-parking-rows';

declare const RED: EditorRED;
declare const $: JQStatic;

/** An input's value as text. */
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** What GET …/edit says, with the user's write permission. */
export interface EditPolicy {
  allowed: boolean;
  reason?: string;
  locked: { names: string[]; prefixes: string[] };
}

/** Asks the runtime whether this user may edit (the setting), and adds the editor's own write permission. */
export function readEditPolicy(t: Translate, config: string, done: (policy: EditPolicy) => void): void {
  const off = (reason: string): EditPolicy => ({ allowed: false, reason, locked: { names: [], prefixes: [] } });
  $.getJSON(url(config, 'edit'))
    .done((answer) => {
      const policy = answer as unknown as EditPolicy;
      const writer = RED.user?.hasPermission('rabbitmq-retry.write') ?? true;
      done(writer ? policy : { ...policy, allowed: false, reason: t('browser.edit.noWrite') });
    })
    .fail((xhr) => done(off(failureText(t, xhr))));
}

/** Why one message cannot be edited (no message id, a binary body), or undefined. */
export function cannotEdit(t: Translate, m: ParkedMessage, policy: EditPolicy | undefined): string | undefined {
  if (!policy) return t('browser.loading');
  if (!policy.allowed) return policy.reason ?? t('browser.edit.off');
  if (!m.messageId) return t('browser.edit.noId');
  if (m.previewEncoding === 'base64') return t('browser.edit.binary');
  return undefined;
}

/** One header row of the dialog: name, value (typedInput) and a remove button; or read-only when locked. */
function headerRow(t: Translate, table: JQ, name: string, value: unknown, locked: boolean): void {
  const row = $('<tr>').addClass(locked ? 'rmq-edit-locked' : 'rmq-edit-header').appendTo(table);
  if (locked) {
    $('<td>').css({ padding: '2px 4px', width: '30%', color: 'var(--red-ui-secondary-text-color, #888)', 'white-space': 'nowrap' }).append($('<i class="fa fa-lock">')).append(` ${name}`).appendTo(row);
    const shown = headerInput(value);
    $('<td colspan="2">').css({ padding: '2px 4px', color: 'var(--red-ui-secondary-text-color, #888)', 'font-family': 'monospace', 'word-break': 'break-all' }).text(shown.text).appendTo(row);
    return;
  }
  const shown = headerInput(value);
  const nameInput = $('<input type="text" class="rmq-edit-name">').val(name).css({ width: '100%', 'box-sizing': 'border-box' });
  $('<td>').css({ padding: '2px 4px', width: '30%' }).append(nameInput).appendTo(row);
  const valueInput = $('<input type="text" class="rmq-edit-value">').val(shown.text).css('width', '100%');
  $('<td>').css({ padding: '2px 4px' }).append(valueInput).appendTo(row);
  valueInput.typedInput({ default: shown.type, types: ['str', 'num', 'bool', 'json'] });
  const remove = $('<button type="button" class="red-ui-button red-ui-button-small rmq-edit-remove">').append($('<i class="fa fa-times">')).on('click', () => row.remove());
  remove.attr('title', t('browser.edit.remove'));
  $('<td>').css({ padding: '2px 4px', width: '1%' }).append(remove).appendTo(row);
}

/** The editable headers as the dialog shows them now; throws saying which one is wrong. */
function readHeaders(t: Translate, table: JQ, locked: EditPolicy['locked']): Record<string, unknown> {
  const headers: Record<string, unknown> = {};
  table.find('tr.rmq-edit-header').each((_i, element) => {
    const row = $(element);
    const name = text(row.find('input.rmq-edit-name').val()).trim();
    if (name === '') return;
    if (lockedBy(locked, name)) throw new Error(t('browser.edit.lockedName', { name }));
    if (name in headers) throw new Error(t('browser.edit.twice', { name }));
    const input = row.find('input.rmq-edit-value');
    headers[name] = headerValue(name, input.typedInput('type'), input.typedInput('value'));
  });
  return headers;
}

/** The tray's form in `box`: the body (checked on each change by `check`), the editable headers and the locked ones. */
function editForm(t: Translate, box: JQ, m: ParkedMessage, policy: EditPolicy, check: () => void): { body: JQ; table: JQ; problem: JQ } {
  const id = m.messageId ?? '';
  $('<div class="form-tips">').text(t('browser.edit.about', { id })).css('margin-bottom', '10px').appendTo(box);
  $('<label>')
    .css({ 'font-weight': 'bold', display: 'block' })
    .text(`${t('browser.edit.body')} · ${m.contentType || t('browser.body.noType')}`)
    .appendTo(box);
  const shown = editableBody(m.preview);
  // As tall as the body, within 4 and 24 lines; the reader can pull it taller.
  const lines = Math.min(Math.max(shown.split('\n').length + 1, 4), 24);
  const body = $('<textarea id="rmq-parking-edit-body" spellcheck="false">')
    .val(shown)
    .attr('rows', String(lines))
    .css({ width: '100%', 'box-sizing': 'border-box', 'font-family': 'monospace', 'font-size': '12px', 'line-height': '1.4', resize: 'vertical' })
    .on('input', check)
    .appendTo(box);
  const problem = $('<div class="rmq-parking-edit-problem">').css({ color: 'var(--red-ui-text-color-error, #c00)', 'margin-top': '4px' }).hide().appendTo(box);
  $('<label>').css({ 'font-weight': 'bold', display: 'block', 'margin-top': '12px' }).text(t('browser.edit.headers')).appendTo(box);
  const table = $('<table class="rmq-parking-edit-headers">').css({ width: '100%', 'border-collapse': 'collapse', 'font-size': '12px' }).appendTo(box);
  const headers = m.headers ?? {};
  const names = Object.keys(headers).sort();
  for (const name of names.filter((n) => !lockedBy(policy.locked, n))) headerRow(t, table, name, headers[name], false);
  $('<button type="button" class="red-ui-button red-ui-button-small" id="rmq-parking-edit-add">')
    .append($('<i class="fa fa-plus">'))
    .append(` ${t('browser.edit.add')}`)
    .css('margin', '6px 0')
    .on('click', () => headerRow(t, table, '', '', false))
    .appendTo(box);
  const lockedNames = names.filter((n) => lockedBy(policy.locked, n));
  if (lockedNames.length > 0) {
    $('<label>').css({ 'font-weight': 'bold', display: 'block', 'margin-top': '12px' }).text(t('browser.edit.locked')).appendTo(box);
    $('<div class="form-tips">').text(t('browser.edit.lockedWhy')).css('margin-bottom', '4px').appendTo(box);
    const lockedTable = $('<table class="rmq-parking-edit-locked">').css({ width: '100%', 'border-collapse': 'collapse', 'font-size': '12px' }).appendTo(box);
    for (const name of lockedNames) headerRow(t, lockedTable, name, headers[name], true);
  }
  return { body, table, problem };
}

/**
 * The edit tray for one message, read whole (`m` from GET …/message): replays the edited copy after
 * a confirmation, in its turn, then `after` (the list is read again).
 */
export function showEditor(t: Translate, config: string, m: ParkedMessage, policy: EditPolicy, inTurn: InTurn, after: () => void): void {
  const id = m.messageId ?? '';
  let body: JQ;
  let table: JQ;
  let problem: JQ;
  const check = (): boolean => {
    const why = bodyProblem(text(body.val()), m.contentType);
    problem.text(why ? t('browser.edit.notJson', { error: why, type: m.contentType ?? '' }) : '').toggle(why !== undefined);
    return why === undefined;
  };
  const replay = (): void => {
    if (!check()) return;
    let headers: Record<string, unknown>;
    try {
      headers = readHeaders(t, table, policy.locked);
    } catch (err) {
      RED.notify((err as Error).message, 'error');
      return;
    }
    askThen(t, t('browser.edit.confirm', { id }), t('browser.edit.replay'), () =>
      inTurn((finished) => {
        $.ajax({ url: url(config, 'edit'), type: 'POST', contentType: 'application/json', data: JSON.stringify({ messageId: id, body: text(body.val()), headers }) })
          .done((result) => {
            finished();
            RED.tray.close();
            RED.notify(t('browser.edit.done', { id: String(result.messageId), original: id }), 'success');
            after();
          })
          .fail((xhr: Failure) => {
            finished();
            RED.notify(failureText(t, xhr), 'error');
          });
      }),
    );
  };
  RED.tray.show({
    title: t('browser.edit.title', { id }).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`),
    width: 700,
    buttons: [
      { id: 'rmq-parking-edit-cancel', text: t('browser.cancel'), click: () => RED.tray.close() },
      { id: 'rmq-parking-edit-replay', text: t('browser.edit.replay'), class: 'primary', click: replay },
    ],
    open(tray) {
      const box = tray.find('.red-ui-tray-body').addClass('rmq-parking-edit').css({ padding: '12px', overflow: 'auto' });
      ({ body, table, problem } = editForm(t, box, m, policy, () => check()));
      check();
    },
  });
}
