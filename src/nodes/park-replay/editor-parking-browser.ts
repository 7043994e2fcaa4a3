/**
 * The parking browser: a sidebar tab listing what waits in the parking queue of a deployed retry
 * config (peeked, never consumed), with replay and delete of selected or all messages, each confirmed,
 * any message's whole body (JSON pretty-printed, text, or hex) and, where settings.js allows it, its
 * edit and replay (editor-parking-edit.ts); or, switched to groups, the queue
 * by folded park reason (editor-parking-groups.ts). Its controls sit at the top of the tab (in view in a
 * narrow window); the list is looked at again after every action and every 10 s while the tab is
 * shown; the groups, which read the whole queue, after every action and on refresh. Above them, the
 * config's consumers' history as small charts (editor-parking-history.ts), fresh with the list.
 */
import { str, type Translate } from '../../editor/index';
import type { EditorRED, JQ, JQStatic } from '../../editor/red';
import { NODE_TYPE } from '../shared/node-types';
import { showBody } from './editor-parking-body';
import { jobsPanel, replayDialog, searchBar, type JobsPanel, type SearchFilter } from './editor-parking-console';
import { cannotEdit, readEditPolicy, showEditor, type EditPolicy } from './editor-parking-edit';
import { groupsView, type GroupsView } from './editor-parking-groups';
import { historyView } from './editor-parking-history';
import { browserLayout, type BrowserLayout, type BrowserView } from './editor-parking-layout';
import { askThen, failureText, getInTurn, messageRow, oneAtATime, runAction, url, type Failure, type ParkedMessage } from './editor-parking-rows';

declare const RED: EditorRED;
declare const $: JQStatic;

const REFRESH_MS = 10_000;

interface ListAnswer {
  messages?: ParkedMessage[];
  total: number;
  queue: string;
  matched?: number;
  lookedAt?: number;
}

/** The tab's state (the config shown, the search, the view) and what it does; its parts fill the layout's boxes. */
class ParkingBrowser {
  private config = '';
  private filter: SearchFilter | undefined;
  private searchWindow = '';
  private view: BrowserView = 'list';
  /** The list, the groups, a body and every action read the queue one at a time. */
  private readonly inTurn = oneAtATime();
  /** Whether this user may edit, per config (settings.js and the write permission): asked once per config. */
  private readonly policies = new Map<string, EditPolicy>();
  readonly ui: BrowserLayout;
  private readonly history: { refresh(config: string): void };
  private readonly jobs: JobsPanel;
  private readonly groups: GroupsView;

  constructor(private readonly t: Translate) {
    this.ui = browserLayout(t, (view) => this.showView(view));
    searchBar(t, this.ui.searchBox, (next, window) => {
      this.filter = next;
      this.searchWindow = window;
      this.ui.actions.find('#rmq-parking-purge-matches').toggle(this.filter !== undefined);
      this.refresh();
    });
    this.history = historyView(t, this.ui.historyBox);
    this.jobs = jobsPanel(t, this.ui.jobsBox, () => this.refresh());
    this.groups = groupsView(t, this.ui.groupsBox, this.ui.summary, {
      inTurn: this.inTurn,
      failed: (xhr) => this.failed(xhr),
      openBody: (m) => this.openBody(m),
      changed: () => this.refresh(),
      replayTo: (key, count) => this.replayTo({ group: key }, t('browser.console.whatGroup', { count, key })),
    });
    this.addActions();
    this.ui.select.on('change', () => this.refresh());
    this.ui.refreshButton.on('click', () => this.refresh());
  }

  /** The deployed retry configs in the select, keeping the one chosen. */
  fillConfigs(): void {
    const { select, summary } = this.ui;
    const previous = str(select.val()) || this.config;
    select.empty();
    RED.nodes.eachConfig((n) => {
      if (n.type === NODE_TYPE.retryConfig) $('<option>').attr('value', str(n.id)).text(str(n.name) || str(n.mainQueue) || str(n.id)).appendTo(select);
    });
    if (previous && select.find(`option[value="${previous}"]`).length > 0) select.val(previous);
    if (select.find('option').length === 0) summary.text(this.t('browser.noConfig'));
  }

  /** Reads the chosen config's list (or groups), its paced replays and its history again. */
  refresh(): void {
    this.config = str(this.ui.select.val());
    const config = this.config;
    if (!config) return;
    this.jobs.refresh(config);
    this.history.refresh(config);
    if (this.view === 'groups') {
      this.groups.refresh(config);
      return;
    }
    this.ui.summary.text(this.t('browser.loading'));
    if (this.policies.has(config)) this.readList();
    else
      readEditPolicy(this.t, config, (policy) => {
        this.policies.set(config, policy);
        this.readList();
      });
  }

  /** Whether the list is what someone looks at now (the timer refreshes only that). */
  listShown(): boolean {
    return this.ui.content.is(':visible') && this.view === 'list';
  }

  private readList(): void {
    const search = this.filter ? { ...this.filter, window: this.searchWindow } : undefined;
    getInTurn(this.inTurn, url(this.config, search ? 'search' : ''), search, (answer) => this.render(answer as unknown as ListAnswer), (xhr) => this.failed(xhr));
  }

  private failed(xhr: Failure): void {
    this.ui.summary.text(failureText(this.t, xhr));
    this.ui.list.empty();
  }

  private selectedIds(): string[] {
    return this.ui.list
      .find('input.rmq-parking-pick:checked')
      .map((_i, element) => str($(element).val()))
      .get();
  }

  private render(answer: ListAnswer): void {
    const { t } = this;
    const messages = answer.messages ?? [];
    const searched = answer.lookedAt !== undefined && this.filter !== undefined;
    this.ui.summary.text(
      searched
        ? t('browser.console.searched', { matched: answer.matched ?? 0, looked: (answer.lookedAt ?? 0).toLocaleString(), total: answer.total.toLocaleString(), queue: answer.queue, shown: messages.length })
        : t('browser.summary', { total: answer.total, queue: answer.queue, shown: messages.length }),
    );
    // Ticked boxes stay ticked when the list is looked at again.
    const ticked = new Set(this.selectedIds());
    this.ui.list.empty();
    const policy = this.policies.get(this.config);
    for (const m of messages) {
      const edit = { why: cannotEdit(t, m, policy), open: (picked: ParkedMessage) => this.openEdit(picked) };
      messageRow(t, m, { pick: { ticked: Boolean(m.messageId && ticked.has(m.messageId)) }, openBody: (picked) => this.openBody(picked), edit }).appendTo(this.ui.list);
    }
  }

  /** Reads the message again, whole (the list has its first bytes only), and shows it. */
  private openBody(m: ParkedMessage): void {
    getInTurn(
      this.inTurn,
      url(this.config, 'message'),
      m.messageId ? { messageId: m.messageId } : { position: String(m.position) },
      (answer) => showBody(this.t, (answer as unknown as { message: ParkedMessage }).message),
      (xhr) => RED.notify(failureText(this.t, xhr), 'error'),
    );
  }

  /** Reads the message again, whole, and opens it for editing. */
  private openEdit(m: ParkedMessage): void {
    const { config, t } = this;
    const policy = this.policies.get(config);
    if (!policy) return;
    getInTurn(
      this.inTurn,
      url(config, 'message'),
      { messageId: m.messageId ?? '' },
      (answer) => {
        const whole = (answer as unknown as { message: ParkedMessage }).message;
        if (whole.truncated) RED.notify(t('browser.edit.tooBig', { count: whole.size }), 'warning');
        else showEditor(t, config, whole, policy, this.inTurn, () => this.refresh());
      },
      (xhr) => RED.notify(failureText(t, xhr), 'error'),
    );
  }

  /** The "replay to…" tray for what `selection` selects, described by `what`; afterwards the list and the jobs again. */
  private replayTo(selection: Record<string, unknown>, what: string): void {
    replayDialog(this.t, this.config, selection, what, () => {
      this.refresh();
      this.jobs.refresh(this.config);
    });
  }

  /** What "replay to…" and "delete matches" act on: the ticked messages, else the search's matches (its window), else everything. */
  private currentSelection(): { selection: Record<string, unknown>; what: string } {
    const ids = this.selectedIds();
    const { filter, searchWindow, t } = this;
    if (ids.length > 0) return { selection: { messageIds: ids }, what: t('browser.console.whatSelected', { count: ids.length }) };
    if (filter) return { selection: { filter, window: searchWindow }, what: t('browser.console.whatMatches', { window: searchWindow || '5000' }) };
    return { selection: {}, what: t('browser.console.whatAll') };
  }

  /** Asks first, in Node-RED's own confirmation style; then runs the action and lists again. */
  private confirmThen(action: 'replay' | 'purge', ids?: string[]): void {
    const { t } = this;
    if (ids && ids.length === 0) {
      RED.notify(t('browser.noneSelected'), 'warning');
      return;
    }
    const question = ids ? t(`browser.confirm.${action}`, { count: ids.length }) : t(`browser.confirm.${action}All`);
    askThen(t, question, t(`browser.${action}${ids ? 'Selected' : 'All'}`), () => this.run(action, ids ? { messageIds: ids } : {}));
  }

  private purgeMatches(): void {
    const { filter, searchWindow, t } = this;
    if (!filter) return;
    askThen(t, t('browser.console.confirmPurgeMatches', { window: searchWindow || '5000' }), t('browser.console.purgeMatches'), () => this.run('purge', { filter, window: searchWindow }));
  }

  private run(action: 'replay' | 'purge', selection: Record<string, unknown>): void {
    runAction(this.t, this.inTurn, this.config, action, selection, (failure) => {
      if (failure) this.failed(failure);
      this.refresh();
    });
  }

  private showView(next: BrowserView): void {
    const { views, actions, searchBox, list, groupsBox } = this.ui;
    this.view = next;
    views.find('button').removeClass('selected');
    views.find(`#rmq-parking-view-${next}`).addClass('selected');
    actions.toggle(next === 'list');
    searchBox.toggle(next === 'list');
    list.toggle(next === 'list');
    groupsBox.toggle(next === 'groups');
    this.refresh();
  }

  private addActions(): void {
    const button = (id: string, icon: string, key: string, onClick: () => void): JQ =>
      $('<button type="button" class="red-ui-button red-ui-button-small"></button>')
        .attr('id', id)
        .append($('<i>').addClass(`fa ${icon}`))
        .append(` ${this.t(`browser.${key}`)}`)
        .on('click', onClick)
        .appendTo(this.ui.actions);
    button('rmq-parking-replay-selected', 'fa-undo', 'replaySelected', () => this.confirmThen('replay', this.selectedIds()));
    button('rmq-parking-replay-all', 'fa-undo', 'replayAll', () => this.confirmThen('replay'));
    button('rmq-parking-purge-selected', 'fa-trash', 'purgeSelected', () => this.confirmThen('purge', this.selectedIds()));
    button('rmq-parking-purge-all', 'fa-trash', 'purgeAll', () => this.confirmThen('purge'));
    button('rmq-parking-replay-to', 'fa-share', 'console.replayTo', () => {
      const { selection, what } = this.currentSelection();
      this.replayTo(selection, what);
    });
    button('rmq-parking-purge-matches', 'fa-trash', 'console.purgeMatches', () => this.purgeMatches()).hide();
  }
}

/** Adds the parking browser to the editor: its sidebar tab, kept fresh, and the action that shows it. */
export function parkingBrowser(t: Translate): void {
  const browser = new ParkingBrowser(t);
  // Fresh while someone looks at it: what a node or another user parked, replayed or purged meanwhile.
  setInterval(() => {
    if (browser.listShown()) browser.refresh();
  }, REFRESH_MS);
  const fillConfigs = (): void => browser.fillConfigs();
  RED.events.on('runtime-state', fillConfigs);
  RED.events.on('deploy', fillConfigs);
  RED.sidebar.addTab({
    id: 'rabbitmq-retry-parking',
    label: t('browser.tab'),
    name: t('browser.name'),
    iconClass: 'fa fa-archive',
    content: browser.ui.content,
    enableOnEdit: true,
    onchange: () => {
      browser.fillConfigs();
      browser.refresh();
    },
  });
  RED.actions.add('rabbitmq-retry:show-parking-browser', () => RED.sidebar.show('rabbitmq-retry-parking'));
}
