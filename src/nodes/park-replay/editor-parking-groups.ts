/**
 * The parking browser's groups: the parking queue by folded park reason (`amount {n} is over the {n}
 * limit · 1873 · first … · last …`), largest first, a page of groups at a time; a group opens to its
 * messages (a page at a time, as the list shows them) and is replayed or deleted whole after a
 * confirmation that names its count, or replayed elsewhere / paced ("replay to…", parking-console.ts). Read as a peek reads: nothing consumed.
 */
import { type Translate } from '../../editor/index';
import type { JQ, JQStatic } from '../../editor/red';
import { NO_REASON_KEY } from '../../lib/parking/fold';
import type { ParkedGroup } from '../../lib/parking/groups';
import { askThen, getInTurn, messageRow, runAction, url, when, type Failure, type InTurn, type ParkedMessage } from './editor-parking-rows';

declare const $: JQStatic;

/** Groups shown at first, and added by each "more groups". */
const GROUP_PAGE = 50;
interface GroupsAnswer {
  queue: string;
  groups: ParkedGroup[];
  ungrouped: number;
  total: number;
}

export interface GroupsView {
  /** Reads the groups of `config`'s parking queue again and shows them. */
  refresh(config: string): void;
}

/** One group: its key, counts and buttons; its messages open below it, a page at a time (`on.open`). */
function groupBlock(t: Translate, group: ParkedGroup, on: { open(table: JQ, more: JQ): void; act(action: 'replay' | 'purge'): void; replayTo(): void }): JQ {
  const block = $('<div class="rmq-parking-group">').attr('data-key', group.key).css({ 'border-top': '1px solid var(--red-ui-secondary-border-color, #ddd)', padding: '4px 2px' });
  $('<div class="rmq-parking-group-key">')
    .css({ 'font-weight': 'bold', 'word-break': 'break-word' })
    .text(group.key === NO_REASON_KEY ? t('browser.noReason') : group.key)
    .attr('title', group.example ?? '')
    .appendTo(block);
  const details = $('<div class="rmq-parking-group-details">')
    .css('color', 'var(--red-ui-secondary-text-color, #888)')
    .text(t('browser.groupLine', { count: group.count.toLocaleString(), first: when(group.firstAt), last: when(group.lastAt) }))
    .appendTo(block);
  if (group.replayed > 0) {
    $('<span class="rmq-parking-group-replayed">')
      .css({ 'margin-left': '6px', color: 'var(--red-ui-text-color-warning, #e67e22)' })
      .text(`· ${t('browser.groupReplayed', { count: group.replayed })}`)
      .appendTo(details);
  }
  const buttons = $('<div>').css({ display: 'flex', 'flex-wrap': 'wrap', gap: '4px', 'margin-top': '2px' }).appendTo(block);
  const button = (cls: string, icon: string, key: string, onClick: () => void): JQ =>
    $('<button type="button" class="red-ui-button red-ui-button-small">')
      .addClass(cls)
      .append($('<i>').addClass(`fa ${icon}`))
      .append(` ${t(`browser.${key}`)}`)
      .on('click', onClick)
      .appendTo(buttons);
  const table = $('<table class="rmq-parking-group-list" style="width: 100%; border-collapse: collapse; font-size: 12px;"></table>').appendTo(block);
  const more = $('<button type="button" class="red-ui-button red-ui-button-small rmq-parking-group-more"></button>').text(t('browser.groupMore')).hide().appendTo(block);
  let open = false;
  button('rmq-parking-group-open', 'fa-list', 'groupOpen', () => {
    open = !open;
    table.empty();
    more.hide();
    if (open) on.open(table, more);
  });
  button('rmq-parking-group-replay', 'fa-undo', 'groupReplay', () => on.act('replay'));
  button('rmq-parking-group-purge', 'fa-trash', 'groupPurge', () => on.act('purge'));
  button('rmq-parking-group-replay-to', 'fa-share', 'console.replayTo', () => on.replayTo());
  return block;
}

/**
 * The groups view in `box`; `summary` says what it shows, `failed` shows an error, `openBody` shows
 * one message whole, `changed` runs after a group was replayed or deleted; every read waits its turn.
 */
export function groupsView(
  t: Translate,
  box: JQ,
  summary: JQ,
  deps: { inTurn: InTurn; failed: (xhr: Failure) => void; openBody: (m: ParkedMessage) => void; changed: () => void; replayTo: (key: string, count: number) => void },
): GroupsView {
  let config = '';
  let shown = GROUP_PAGE;

  /** The next page of a group's messages into its table; the "more" button asks for the one after. */
  const openPage = (group: ParkedGroup, table: JQ, more: JQ, offset: number): void => {
    getInTurn(
      deps.inTurn,
      url(config, 'group'),
      { key: group.key, offset: String(offset) },
      (answer) => {
        const page = answer as unknown as { messages: ParkedMessage[]; more: boolean };
        for (const m of page.messages) messageRow(t, m, { openBody: deps.openBody }).appendTo(table);
        more
          .toggle(page.more)
          .off('click')
          .on('click', () => openPage(group, table, more, offset + page.messages.length));
      },
      deps.failed,
    );
  };

  const act = (group: ParkedGroup, action: 'replay' | 'purge'): void => {
    const key = group.key === NO_REASON_KEY ? t('browser.noReason') : group.key;
    askThen(t, t(`browser.confirm.${action}Group`, { count: group.count, key }), t(`browser.${action}Group`), () =>
      runAction(t, deps.inTurn, config, action, { group: group.key }, (failure) => {
        if (failure) deps.failed(failure);
        deps.changed();
      }),
    );
  };

  const render = (answer: GroupsAnswer): void => {
    summary.text(t('browser.groupsSummary', { total: answer.total, queue: answer.queue, count: answer.groups.length }));
    box.empty();
    for (const group of answer.groups.slice(0, shown)) {
      const on = { open: (table: JQ, more: JQ) => openPage(group, table, more, 0), act: (action: 'replay' | 'purge') => act(group, action), replayTo: () => deps.replayTo(group.key, group.count) };
      groupBlock(t, group, on).appendTo(box);
    }
    if (answer.groups.length > shown) {
      $('<button type="button" class="red-ui-button red-ui-button-small rmq-parking-more-groups">')
        .text(t('browser.moreGroups'))
        .css('margin-top', '4px')
        .on('click', () => {
          shown += GROUP_PAGE;
          render(answer);
        })
        .appendTo(box);
    }
    if (answer.ungrouped > 0) $('<div class="form-tips">').text(t('browser.ungrouped', { count: answer.ungrouped })).css('margin-top', '4px').appendTo(box);
  };

  return {
    refresh(next: string): void {
      if (next !== config) shown = GROUP_PAGE;
      config = next;
      summary.text(t('browser.loading'));
      getInTurn(
        deps.inTurn,
        url(config, 'groups'),
        undefined,
        (answer) => render(answer as unknown as GroupsAnswer),
        (xhr) => {
          box.empty();
          deps.failed(xhr);
        },
      );
    },
  };
}
