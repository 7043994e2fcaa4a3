/**
 * The parking browser's boxes, top to bottom: its controls (the config, refresh, list or groups) at
 * the top of the tab, wrapping in a narrow sidebar rather than running off its edge; the paced
 * replays, the search (list view), the summary, the consumers' history, the list's actions, the list
 * and the groups. The parts that fill them are editor-parking-console.ts, editor-parking-history.ts and editor-parking-groups.ts.
 */
import type { Translate } from '../../editor/index';
import type { JQ, JQStatic } from '../../editor/red';

declare const $: JQStatic;

export type BrowserView = 'list' | 'groups';

export interface BrowserLayout {
  content: JQ;
  select: JQ;
  refreshButton: JQ;
  views: JQ;
  jobsBox: JQ;
  searchBox: JQ;
  summary: JQ;
  historyBox: JQ;
  actions: JQ;
  list: JQ;
  groupsBox: JQ;
}

/** The boxes; a view button calls `showView`. */
export function browserLayout(t: Translate, showView: (view: BrowserView) => void): BrowserLayout {
  const content = $('<div class="rmq-parking" style="padding: 8px; overflow-y: auto; height: 100%; box-sizing: border-box;"></div>');
  const controls = $('<div class="rmq-parking-controls" style="display: flex; flex-wrap: wrap; gap: 4px; align-items: center; margin-bottom: 6px;"></div>').appendTo(content);
  const select = $('<select id="rmq-parking-config" style="flex: 1 1 120px; min-width: 0; max-width: 100%;"></select>').appendTo(controls);
  const refreshButton = $('<button type="button" class="red-ui-button red-ui-button-small" id="rmq-parking-refresh"><i class="fa fa-refresh"></i></button>').appendTo(controls);
  // Messages one by one, or by group (folded park reason).
  const views = $('<span class="button-group"></span>').appendTo(controls);
  const viewButton = (view: BrowserView, icon: string, key: string): JQ =>
    $('<button type="button" class="red-ui-button red-ui-button-small toggle"></button>')
      .attr('id', `rmq-parking-view-${view}`)
      .append($('<i>').addClass(`fa ${icon}`))
      .append(` ${t(`browser.${key}`)}`)
      .on('click', () => showView(view))
      .appendTo(views);
  viewButton('list', 'fa-list', 'viewList');
  viewButton('groups', 'fa-object-group', 'viewGroups');
  views.find('#rmq-parking-view-list').addClass('selected');
  // The paced replays with their progress, then the search (list view), then what is shown.
  const jobsBox = $('<div>').appendTo(content);
  const searchBox = $('<div>').appendTo(content);
  const summary = $('<div class="rmq-parking-summary" style="margin-bottom: 6px;"></div>').appendTo(content);
  // Its consumers' last hour (or day), minute by minute, as small charts (editor-parking-history.ts).
  const historyBox = $('<div class="rmq-parking-history" style="margin-bottom: 8px; border-bottom: 1px solid var(--red-ui-secondary-border-color, #ddd); padding-bottom: 4px;"></div>').appendTo(content);
  const actions = $('<div class="rmq-parking-actions" style="display: flex; flex-wrap: wrap; gap: 4px; margin-bottom: 6px;"></div>').appendTo(content);
  const list = $('<table class="rmq-parking-list" style="width: 100%; border-collapse: collapse; font-size: 12px;"></table>').appendTo(content);
  const groupsBox = $('<div class="rmq-parking-groups" style="font-size: 12px;"></div>').hide().appendTo(content);
  return { content, select, refreshButton, views, jobsBox, searchBox, summary, historyBox, actions, list, groupsBox };
}
