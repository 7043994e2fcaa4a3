/**
 * The parking browser: a sidebar tab listing what waits in the parking queue of a deployed retry
 * config (peeked, never consumed), with replay and delete of selected or all messages, each confirmed,
 * and any message's whole body (JSON pretty-printed, text, or hex). Its controls sit at the top of the
 * tab (in view in a narrow window); the list is looked at again after every action and every 10 s
 * while the tab is shown.
 */
import { bodyViews, renderBody, type BodyView } from '../body-view';
import { str, type Translate } from '../index';
import type { EditorRED, JQ, JQStatic } from '../red';

declare const RED: EditorRED;
declare const $: JQStatic;

const REFRESH_MS = 10_000;

interface ParkedMessage {
  position: number;
  messageId?: string | null;
  traceId?: string | null;
  contentType?: string | null;
  reason?: string | null;
  attempts: number;
  originalRoutingKey: string | null;
  parkedAt?: string | null;
  preview: string;
  previewEncoding?: 'utf8' | 'base64';
  truncated?: boolean;
  size: number;
}

type Failure = { responseJSON?: { error?: string }; statusText: string };

const url = (config: string, action = ''): string => `rabbitmq-retry/parking/${encodeURIComponent(config)}${action ? `/${action}` : ''}`;

/** Text for the tray's title, which Node-RED inserts as HTML. */
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A tray with one message's whole body: its views as buttons, the chosen one in a <pre>. */
function showBody(t: Translate, message: ParkedMessage): void {
  const views = bodyViews(message);
  RED.tray.show({
    title: escapeHtml(t('browser.body.title', { id: message.messageId ?? `#${message.position + 1}` })),
    width: 700,
    buttons: [{ id: 'rmq-parking-body-close', text: t('browser.body.close'), class: 'primary', click: () => RED.tray.close() }],
    open(tray) {
      const body = tray.find('.red-ui-tray-body').addClass('rmq-parking-body').css({ padding: '12px', overflow: 'auto' });
      const size = message.truncated ? t('browser.body.cut', { shown: new TextEncoder().encode(message.preview).length, count: message.size }) : '';
      $('<div class="form-tips">')
        .text(`${t('browser.body.about', { count: message.size, type: message.contentType || t('browser.body.noType') })}${size ? ` ${size}` : ''}`)
        .appendTo(body);
      const buttons = $('<span class="button-group" style="display: inline-block; margin: 8px 0;"></span>').appendTo(body);
      const pre = $('<pre class="rmq-parking-body-text" style="white-space: pre-wrap; word-break: break-all; font-size: 12px; margin: 0;"></pre>').appendTo(body);
      const more = $('<div class="form-tips rmq-parking-body-more"></div>').appendTo(body);
      const show = (view: BodyView): void => {
        const rendered = renderBody(message, view);
        pre.text(rendered.text).attr('data-view', view);
        more.text(rendered.hidden > 0 ? t('browser.body.hexMore', { count: rendered.hidden }) : '').toggle(rendered.hidden > 0);
        buttons.find('button').removeClass('selected');
        buttons.find(`#rmq-parking-body-view-${view}`).addClass('selected');
      };
      for (const view of views) {
        $('<button type="button" class="red-ui-button red-ui-button-small toggle">')
          .attr('id', `rmq-parking-body-view-${view}`)
          .text(t(`browser.body.${view}`))
          .on('click', () => show(view))
          .appendTo(buttons);
      }
      show(views[0] ?? 'hex');
    },
  });
}

export function parkingBrowser(t: Translate): void {
  let config = '';
  const content = $('<div class="rmq-parking" style="padding: 8px; overflow-y: auto; height: 100%; box-sizing: border-box;"></div>');
  // The controls first, wrapping in a narrow sidebar rather than running off its edge.
  const controls = $('<div class="rmq-parking-controls" style="display: flex; flex-wrap: wrap; gap: 4px; align-items: center; margin-bottom: 6px;"></div>').appendTo(content);
  const select = $('<select id="rmq-parking-config" style="flex: 1 1 120px; min-width: 0; max-width: 100%;"></select>').appendTo(controls);
  const refreshButton = $('<button type="button" class="red-ui-button red-ui-button-small" id="rmq-parking-refresh"><i class="fa fa-refresh"></i></button>').appendTo(controls);
  const summary = $('<div class="rmq-parking-summary" style="margin-bottom: 6px;"></div>').appendTo(content);
  const actions = $('<div class="rmq-parking-actions" style="display: flex; flex-wrap: wrap; gap: 4px; margin-bottom: 6px;"></div>').appendTo(content);
  const list = $('<table class="rmq-parking-list" style="width: 100%; border-collapse: collapse; font-size: 12px;"></table>').appendTo(content);

  const button = (id: string, icon: string, key: string, onClick: () => void): JQ =>
    $('<button type="button" class="red-ui-button red-ui-button-small"></button>')
      .attr('id', id)
      .append($('<i>').addClass(`fa ${icon}`))
      .append(` ${t(`browser.${key}`)}`)
      .on('click', onClick)
      .appendTo(actions);
  const selectedIds = (): string[] =>
    list
      .find('input.rmq-parking-pick:checked')
      .map((_i, element) => str($(element).val()))
      .get();
  const fillConfigs = (): void => {
    const previous = str(select.val()) || config;
    select.empty();
    RED.nodes.eachConfig((n) => {
      if (n.type === 'retry-config') $('<option>').attr('value', str(n.id)).text(str(n.name) || str(n.mainQueue) || str(n.id)).appendTo(select);
    });
    if (previous && select.find(`option[value="${previous}"]`).length > 0) select.val(previous);
    if (select.find('option').length === 0) summary.text(t('browser.noConfig'));
  };
  const failed = (xhr: Failure): void => {
    summary.text(t('browser.failed', { error: xhr.responseJSON?.error ?? xhr.statusText }));
    list.empty();
  };
  /** Reads the message again, whole (the list has its first bytes only), and shows it. */
  const openBody = (m: ParkedMessage): void => {
    $.getJSON(url(config, 'message'), m.messageId ? { messageId: m.messageId } : { position: String(m.position) })
      .done((answer) => showBody(t, (answer as unknown as { message: ParkedMessage }).message))
      .fail((xhr) => RED.notify(t('browser.failed', { error: xhr.responseJSON?.error ?? xhr.statusText }), 'error'));
  };
  const render = (answer: { messages?: ParkedMessage[]; total: number; queue: string }): void => {
    const messages = answer.messages ?? [];
    summary.text(t('browser.summary', { total: answer.total, queue: answer.queue, shown: messages.length }));
    // Ticked boxes stay ticked when the list is looked at again.
    const ticked = new Set(selectedIds());
    list.empty();
    for (const m of messages) {
      const row = $('<tr>').addClass('rmq-parking-row').attr('data-message-id', m.messageId ?? '').css('border-top', '1px solid var(--red-ui-secondary-border-color, #ddd)').appendTo(list);
      const pick = $('<input type="checkbox" class="rmq-parking-pick">')
        .val(m.messageId ?? '')
        .prop('disabled', !m.messageId)
        .prop('checked', Boolean(m.messageId && ticked.has(m.messageId)));
      $('<td>').css({ 'vertical-align': 'top', padding: '4px 2px' }).append(pick).appendTo(row);
      const cell = $('<td>').css({ padding: '4px 2px', 'word-break': 'break-word' }).appendTo(row);
      $('<div>').css('font-weight', 'bold').text(m.reason || t('browser.noReason')).appendTo(cell);
      $('<div>')
        .css('color', 'var(--red-ui-secondary-text-color, #888)')
        .text(t('browser.details', { count: m.attempts, key: m.originalRoutingKey ?? '-', time: m.parkedAt ? new Date(m.parkedAt).toLocaleString() : '-' }))
        .appendTo(cell);
      if (m.traceId) $('<div>').addClass('rmq-parking-trace').css({ color: 'var(--red-ui-secondary-text-color, #888)', 'font-family': 'monospace' }).text(t('browser.trace', { id: m.traceId })).appendTo(cell);
      const preview = m.previewEncoding === 'base64' ? t('browser.binary', { count: m.size }) : m.preview + (m.truncated ? '…' : '');
      $('<pre>').addClass('rmq-parking-preview').css({ margin: '2px 0 0', 'white-space': 'pre-wrap', 'max-height': '4.5em', overflow: 'hidden' }).text(preview).appendTo(cell);
      $('<button type="button" class="red-ui-button red-ui-button-small rmq-parking-body-open"></button>')
        .append($('<i class="fa fa-file-text-o">'))
        .append(` ${t('browser.body.show')}`)
        .css('margin-top', '2px')
        .on('click', () => openBody(m))
        .appendTo(cell);
    }
  };
  const refresh = (): void => {
    config = str(select.val());
    if (!config) return;
    summary.text(t('browser.loading'));
    $.getJSON(url(config))
      .done((answer) => render(answer as unknown as { messages?: ParkedMessage[]; total: number; queue: string }))
      .fail(failed);
  };
  /** Asks first, in Node-RED's own confirmation style; then runs the action and lists again. */
  const confirmThen = (action: 'replay' | 'purge', ids?: string[]): void => {
    if (ids && ids.length === 0) {
      RED.notify(t('browser.noneSelected'), 'warning');
      return;
    }
    const notification = RED.notify(ids ? t(`browser.confirm.${action}`, { count: ids.length }) : t(`browser.confirm.${action}All`), {
      modal: true,
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- RED.notify's `fixed` (stays until closed), not String.prototype.fixed
      fixed: true,
      type: 'warning',
      buttons: [
        { text: t('browser.cancel'), click: () => notification.close() },
        {
          text: t(`browser.${action}${ids ? 'Selected' : 'All'}`),
          class: 'primary',
          id: 'rmq-parking-confirm',
          click: () => {
            notification.close();
            $.ajax({ url: url(config, action), type: 'POST', contentType: 'application/json', data: JSON.stringify(ids ? { messageIds: ids } : {}) })
              .done((result) => {
                RED.notify(t(`browser.done.${action}`, { count: action === 'replay' ? result.replayed : result.purged, left: result.remaining }), 'success');
                refresh();
              })
              .fail((xhr) => {
                failed(xhr);
                refresh();
              });
          },
        },
      ],
    });
  };
  button('rmq-parking-replay-selected', 'fa-undo', 'replaySelected', () => confirmThen('replay', selectedIds()));
  button('rmq-parking-replay-all', 'fa-undo', 'replayAll', () => confirmThen('replay'));
  button('rmq-parking-purge-selected', 'fa-trash', 'purgeSelected', () => confirmThen('purge', selectedIds()));
  button('rmq-parking-purge-all', 'fa-trash', 'purgeAll', () => confirmThen('purge'));
  select.on('change', refresh);
  refreshButton.on('click', refresh);
  // Fresh while someone looks at it: what a node or another user parked, replayed or purged meanwhile.
  setInterval(() => {
    if (content.is(':visible')) refresh();
  }, REFRESH_MS);

  RED.events.on('runtime-state', fillConfigs);
  RED.events.on('deploy', fillConfigs);
  RED.sidebar.addTab({
    id: 'rabbitmq-retry-parking',
    label: t('browser.tab'),
    name: t('browser.name'),
    iconClass: 'fa fa-archive',
    content,
    enableOnEdit: true,
    onchange: () => {
      fillConfigs();
      refresh();
    },
  });
  RED.actions.add('rabbitmq-retry:show-parking-browser', () => RED.sidebar.show('rabbitmq-retry-parking'));
}
