/**
 * What the parking browser's list and its groups share: a parked message's row (a message replayed
 * before and parked again stands out, saying how often), the admin endpoints' URLs, and the
 * confirmation asked before anything is replayed or deleted.
 */
import { type Translate } from '../../editor/index';
import type { EditorRED, JQ, JQStatic } from '../../editor/red';

declare const RED: EditorRED;
declare const $: JQStatic;

export interface ParkedMessage {
  position: number;
  messageId?: string | null;
  /** The W3C trace id the message carries (its traceparent), to find it in the user's tracing. */
  traceId?: string | null;
  contentType?: string | null;
  reason?: string | null;
  attempts: number;
  /** How often it was replayed before it was parked again. */
  replays?: number;
  originalRoutingKey: string | null;
  parkedAt?: string | null;
  preview: string;
  previewEncoding?: 'utf8' | 'base64';
  truncated?: boolean;
  size: number;
  /** All headers, JSON-safe (the whole message's read has them). */
  headers?: Record<string, unknown>;
}

/**
 * Runs the parking browser's reads and actions one at a time: each reads the queue by taking its
 * messages for a moment, so two at once would each miss what the other holds. `start` calls
 * `finished` when its answer is in.
 */
export type InTurn = (start: (finished: () => void) => void) => void;

export function oneAtATime(): InTurn {
  const waiting: Array<(finished: () => void) => void> = [];
  let busy = false;
  const next = (): void => {
    const start = waiting.shift();
    busy = start !== undefined;
    if (start) start(next);
  };
  return (start) => {
    waiting.push(start);
    if (!busy) next();
  };
}

/** A GET of the parking endpoints in its turn. */
export function getInTurn(inTurn: InTurn, path: string, data: Record<string, string> | undefined, done: (answer: Record<string, unknown>) => void, fail: (xhr: Failure) => void): void {
  inTurn((finished) => {
    $.getJSON(path, data)
      .done((answer) => {
        finished();
        done(answer);
      })
      .fail((xhr) => {
        finished();
        fail(xhr);
      });
  });
}

export type Failure = { responseJSON?: { error?: string }; statusText: string };

export const url = (config: string, action = ''): string => `rabbitmq-retry/parking/${encodeURIComponent(config)}${action ? `/${action}` : ''}`;

export const failureText = (t: Translate, xhr: Failure): string => t('browser.failed', { error: xhr.responseJSON?.error ?? xhr.statusText });

/** A time as the user's locale writes it, '-' when unknown. */
export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '-');

/**
 * One parked message as a table row: reason, details, preview, a button for the whole body; `pick`
 * adds the tick box, `edit` the "Edit & replay" button (disabled, saying why, when `why` is set).
 */
export function messageRow(t: Translate, m: ParkedMessage, options: { pick?: { ticked: boolean }; openBody: (m: ParkedMessage) => void; edit?: { why: string | undefined; open: (m: ParkedMessage) => void } }): JQ {
  const replays = m.replays ?? 0;
  const row = $('<tr>').addClass('rmq-parking-row').attr('data-message-id', m.messageId ?? '').css('border-top', '1px solid var(--red-ui-secondary-border-color, #ddd)');
  if (options.pick) {
    const pick = $('<input type="checkbox" class="rmq-parking-pick">')
      .val(m.messageId ?? '')
      .prop('disabled', !m.messageId)
      .prop('checked', Boolean(m.messageId && options.pick.ticked));
    $('<td>').css({ 'vertical-align': 'top', padding: '4px 2px' }).append(pick).appendTo(row);
  }
  const cell = $('<td>').css({ padding: '4px 2px', 'word-break': 'break-word' }).appendTo(row);
  if (replays > 0) {
    // Replayed and failed again: the fix did not help this one.
    row.addClass('rmq-parking-replayed');
    cell.css('border-left', '3px solid var(--red-ui-text-color-warning, #e67e22)');
  }
  const head = $('<div>').css('font-weight', 'bold').text(m.reason || t('browser.noReason')).appendTo(cell);
  if (replays > 0) {
    $('<span class="rmq-parking-replayed-badge">')
      .css({ 'margin-left': '6px', padding: '0 4px', 'border-radius': '3px', background: 'var(--red-ui-text-color-warning, #e67e22)', color: '#fff', 'font-weight': 'normal' })
      .text(t('browser.replayedBadge', { count: replays }))
      .appendTo(head);
  }
  $('<div>')
    .css('color', 'var(--red-ui-secondary-text-color, #888)')
    .text(t('browser.details', { count: m.attempts, key: m.originalRoutingKey ?? '-', time: when(m.parkedAt) }))
    .appendTo(cell);
  if (m.traceId) $('<div>').addClass('rmq-parking-trace').css({ color: 'var(--red-ui-secondary-text-color, #888)', 'font-family': 'monospace' }).text(t('browser.trace', { id: m.traceId })).appendTo(cell);
  const preview = m.previewEncoding === 'base64' ? t('browser.binary', { count: m.size }) : m.preview + (m.truncated ? '…' : '');
  $('<pre>').addClass('rmq-parking-preview').css({ margin: '2px 0 0', 'white-space': 'pre-wrap', 'max-height': '4.5em', overflow: 'hidden' }).text(preview).appendTo(cell);
  $('<button type="button" class="red-ui-button red-ui-button-small rmq-parking-body-open"></button>')
    .append($('<i class="fa fa-file-text-o">'))
    .append(` ${t('browser.body.show')}`)
    .css('margin-top', '2px')
    .on('click', () => options.openBody(m))
    .appendTo(cell);
  if (options.edit) {
    const { why, open } = options.edit;
    // A disabled button gets no hover: its wrapper carries the tooltip.
    const wrapper = $('<span class="rmq-parking-edit-wrap">').css({ display: 'inline-block', 'margin-left': '4px' }).appendTo(cell);
    $('<button type="button" class="red-ui-button red-ui-button-small rmq-parking-edit-open"></button>')
      .append($('<i class="fa fa-pencil">'))
      .append(` ${t('browser.edit.open')}`)
      .prop('disabled', why !== undefined)
      .css('margin-top', '2px')
      .on('click', () => open(m))
      .appendTo(wrapper);
    if (why !== undefined) wrapper.attr('title', why);
  }
  return row;
}

/** Asks `question` in Node-RED's own confirmation style; `yes` (the confirming button's text) runs `then`. */
export function askThen(t: Translate, question: string, yes: string, then: () => void): void {
  const notification = RED.notify(question, {
    modal: true,
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- RED.notify's `fixed` (stays until closed), not String.prototype.fixed
    fixed: true,
    type: 'warning',
    buttons: [
      { text: t('browser.cancel'), click: () => notification.close() },
      {
        text: yes,
        class: 'primary',
        id: 'rmq-parking-confirm',
        click: () => {
          notification.close();
          then();
        },
      },
    ],
  });
}

/** Replays or deletes what `selection` selects (after the caller asked), in its turn; tells the result, then `after`. */
export function runAction(t: Translate, inTurn: InTurn, config: string, action: 'replay' | 'purge', selection: Record<string, unknown>, after: (failure?: Failure) => void): void {
  inTurn((finished) => {
    $.ajax({ url: url(config, action), type: 'POST', contentType: 'application/json', data: JSON.stringify(selection) })
      .done((result) => {
        finished();
        RED.notify(t(`browser.done.${action}`, { count: action === 'replay' ? result.replayed : result.purged, left: result.remaining }), 'success');
        after();
      })
      .fail((xhr) => {
        finished();
        after(xhr);
      });
  });
}
