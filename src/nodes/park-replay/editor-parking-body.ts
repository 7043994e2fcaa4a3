/** The parking browser's tray with one parked message's whole body: its views (JSON, text, hex) as buttons. */
import { bodyViews, renderBody, type BodyView } from './editor-body-view';
import type { Translate } from '../../editor/index';
import type { EditorRED, JQStatic } from '../../editor/red';
import type { ParkedMessage } from './editor-parking-rows';

declare const RED: EditorRED;
declare const $: JQStatic;

/** Text for the tray's title, which Node-RED inserts as HTML. */
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A tray with one message's whole body: its views as buttons, the chosen one in a <pre>. */
export function showBody(t: Translate, message: ParkedMessage): void {
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
