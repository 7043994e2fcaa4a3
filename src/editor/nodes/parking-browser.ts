/**
 * The parking browser: a sidebar tab listing what waits in the parking queue of a deployed retry
 * config (peeked, never consumed), with replay and delete of selected or all messages, each confirmed,
 * any message's whole body (JSON pretty-printed, text, or hex) and, where settings.js allows it, its
 * edit and replay (parking-edit.ts); or, switched to groups, the queue
 * by folded park reason (parking-groups.ts). Its controls sit at the top of the tab (in view in a
 * narrow window); the list is looked at again after every action and every 10 s while the tab is
 * shown; the groups, which read the whole queue, after every action and on refresh. Above them, the
 * config's consumers' history as small charts (parking-history.ts), fresh with the list.
 */
import { bodyViews, renderBody, type BodyView } from '../body-view';
import { str, type Translate } from '../index';
import type { EditorRED, JQ, JQStatic } from '../red';
import { groupsView } from './parking-groups';
import { jobsPanel, replayDialog, searchBar, type SearchFilter } from './parking-console';
import { historyView } from './parking-history';
import { cannotEdit, readEditPolicy, showEditor, type EditPolicy } from './parking-edit';
import { askThen, failureText, getInTurn, messageRow, oneAtATime, runAction, url, type Failure, type ParkedMessage } from './parking-rows';

declare const RED: EditorRED;
declare const $: JQStatic;

const REFRESH_MS = 10_000;

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
  // Messages one by one, or by group (folded park reason).
  const views = $('<span class="button-group"></span>').appendTo(controls);
  const viewButton = (view: 'list' | 'groups', icon: string, key: string): JQ =>
    $('<button type="button" class="red-ui-button red-ui-button-small toggle"></button>')
      .attr('id', `rmq-parking-view-${view}`)
      .append($('<i>').addClass(`fa ${icon}`))
      .append(` ${t(`browser.${key}`)}`)
      .on('click', () => showView(view))
      .appendTo(views);
  viewButton('list', 'fa-list', 'viewList');
  viewButton('groups', 'fa-object-group', 'viewGroups');
  // The paced replays with their progress, then the search (list view), then what is shown.
  const jobsBox = $('<div>').appendTo(content);
  const searchBox = $('<div>').appendTo(content);
  let filter: SearchFilter | undefined;
  let searchWindow = '';
  searchBar(t, searchBox, (next, window) => {
    filter = next;
    searchWindow = window;
    actions.find('#rmq-parking-purge-matches').toggle(filter !== undefined);
    refresh();
  });
  const summary = $('<div class="rmq-parking-summary" style="margin-bottom: 6px;"></div>').appendTo(content);
  // Its consumers' last hour (or day), minute by minute, as small charts (parking-history.ts).
  const history = historyView(t, $('<div class="rmq-parking-history" style="margin-bottom: 8px; border-bottom: 1px solid var(--red-ui-secondary-border-color, #ddd); padding-bottom: 4px;"></div>').appendTo(content));
  const actions = $('<div class="rmq-parking-actions" style="display: flex; flex-wrap: wrap; gap: 4px; margin-bottom: 6px;"></div>').appendTo(content);
  const list = $('<table class="rmq-parking-list" style="width: 100%; border-collapse: collapse; font-size: 12px;"></table>').appendTo(content);
  const groupsBox = $('<div class="rmq-parking-groups" style="font-size: 12px;"></div>').hide().appendTo(content);
  let view: 'list' | 'groups' = 'list';
  // The list, the groups, a body and every action read the queue one at a time.
  const inTurn = oneAtATime();

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
    summary.text(failureText(t, xhr));
    list.empty();
  };
  /** Reads the message again, whole (the list has its first bytes only), and shows it. */
  const openBody = (m: ParkedMessage): void => {
    getInTurn(
      inTurn,
      url(config, 'message'),
      m.messageId ? { messageId: m.messageId } : { position: String(m.position) },
      (answer) => showBody(t, (answer as unknown as { message: ParkedMessage }).message),
      (xhr) => RED.notify(failureText(t, xhr), 'error'),
    );
  };
  /** Whether this user may edit, per config (settings.js and the write permission): asked once per config. */
  const policies = new Map<string, EditPolicy>();
  /** Reads the message again, whole, and opens it for editing. */
  const openEdit = (m: ParkedMessage): void => {
    const policy = policies.get(config);
    if (!policy) return;
    getInTurn(
      inTurn,
      url(config, 'message'),
      { messageId: m.messageId ?? '' },
      (answer) => {
        const whole = (answer as unknown as { message: ParkedMessage }).message;
        if (whole.truncated) RED.notify(t('browser.edit.tooBig', { count: whole.size }), 'warning');
        else showEditor(t, config, whole, policy, inTurn, refresh);
      },
      (xhr) => RED.notify(failureText(t, xhr), 'error'),
    );
  };
  const render = (answer: { messages?: ParkedMessage[]; total: number; queue: string; matched?: number; lookedAt?: number }): void => {
    const messages = answer.messages ?? [];
    const searched = answer.lookedAt !== undefined && filter !== undefined;
    summary.text(
      searched
        ? t('browser.console.searched', { matched: answer.matched ?? 0, looked: (answer.lookedAt ?? 0).toLocaleString(), total: answer.total.toLocaleString(), queue: answer.queue, shown: messages.length })
        : t('browser.summary', { total: answer.total, queue: answer.queue, shown: messages.length }),
    );
    // Ticked boxes stay ticked when the list is looked at again.
    const ticked = new Set(selectedIds());
    list.empty();
    const policy = policies.get(config);
    for (const m of messages) {
      const edit = { why: cannotEdit(t, m, policy), open: openEdit };
      messageRow(t, m, { pick: { ticked: Boolean(m.messageId && ticked.has(m.messageId)) }, openBody, edit }).appendTo(list);
    }
  };
  const jobs = jobsPanel(t, jobsBox, () => refresh());
  /** The "replay to…" tray for what `selection` selects, described by `what`; afterwards the list and the jobs again. */
  const replayTo = (selection: Record<string, unknown>, what: string): void =>
    replayDialog(t, config, selection, what, () => {
      refresh();
      jobs.refresh(config);
    });
  const groups = groupsView(t, groupsBox, summary, {
    inTurn,
    failed,
    openBody,
    changed: () => refresh(),
    replayTo: (key, count) => replayTo({ group: key }, t('browser.console.whatGroup', { count, key })),
  });
  const refresh = (): void => {
    config = str(select.val());
    if (!config) return;
    jobs.refresh(config);
    history.refresh(config);
    if (view === 'groups') {
      groups.refresh(config);
      return;
    }
    summary.text(t('browser.loading'));
    const search = filter ? { ...filter, window: searchWindow } : undefined;
    const readList = (): void => getInTurn(inTurn, url(config, search ? 'search' : ''), search, (answer) => render(answer as unknown as { messages?: ParkedMessage[]; total: number; queue: string }), failed);
    const wanted = config;
    if (policies.has(config)) readList();
    else
      readEditPolicy(t, config, (policy) => {
        policies.set(wanted, policy);
        readList();
      });
  };
  /** What "replay to…" and "delete matches" act on: the ticked messages, else the search's matches (its window), else everything. */
  const currentSelection = (): { selection: Record<string, unknown>; what: string } => {
    const ids = selectedIds();
    if (ids.length > 0) return { selection: { messageIds: ids }, what: t('browser.console.whatSelected', { count: ids.length }) };
    if (filter) return { selection: { filter, window: searchWindow }, what: t('browser.console.whatMatches', { window: searchWindow || '5000' }) };
    return { selection: {}, what: t('browser.console.whatAll') };
  };
  /** Asks first, in Node-RED's own confirmation style; then runs the action and lists again. */
  const confirmThen = (action: 'replay' | 'purge', ids?: string[]): void => {
    if (ids && ids.length === 0) {
      RED.notify(t('browser.noneSelected'), 'warning');
      return;
    }
    const question = ids ? t(`browser.confirm.${action}`, { count: ids.length }) : t(`browser.confirm.${action}All`);
    askThen(t, question, t(`browser.${action}${ids ? 'Selected' : 'All'}`), () =>
      runAction(t, inTurn, config, action, ids ? { messageIds: ids } : {}, (failure) => {
        if (failure) failed(failure);
        refresh();
      }),
    );
  };
  function showView(next: 'list' | 'groups'): void {
    view = next;
    views.find('button').removeClass('selected');
    views.find(`#rmq-parking-view-${next}`).addClass('selected');
    actions.toggle(next === 'list');
    searchBox.toggle(next === 'list');
    list.toggle(next === 'list');
    groupsBox.toggle(next === 'groups');
    refresh();
  }
  views.find('#rmq-parking-view-list').addClass('selected');
  button('rmq-parking-replay-selected', 'fa-undo', 'replaySelected', () => confirmThen('replay', selectedIds()));
  button('rmq-parking-replay-all', 'fa-undo', 'replayAll', () => confirmThen('replay'));
  button('rmq-parking-purge-selected', 'fa-trash', 'purgeSelected', () => confirmThen('purge', selectedIds()));
  button('rmq-parking-purge-all', 'fa-trash', 'purgeAll', () => confirmThen('purge'));
  button('rmq-parking-replay-to', 'fa-share', 'console.replayTo', () => {
    const { selection, what } = currentSelection();
    replayTo(selection, what);
  });
  button('rmq-parking-purge-matches', 'fa-trash', 'console.purgeMatches', () => {
    if (!filter) return;
    askThen(t, t('browser.console.confirmPurgeMatches', { window: searchWindow || '5000' }), t('browser.console.purgeMatches'), () =>
      runAction(t, inTurn, config, 'purge', { filter, window: searchWindow }, (failure) => {
        if (failure) failed(failure);
        refresh();
      }),
    );
  }).hide();
  select.on('change', refresh);
  refreshButton.on('click', refresh);
  // Fresh while someone looks at it: what a node or another user parked, replayed or purged meanwhile.
  setInterval(() => {
    if (content.is(':visible') && view === 'list') refresh();
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
