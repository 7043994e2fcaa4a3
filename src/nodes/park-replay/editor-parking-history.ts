/**
 * The parking browser's history: for the chosen retry config, each of its consumers' last hour (or 6 h,
 * 24 h) minute by minute — acked, retried, parked, replayed, duplicates a minute as bars, the parking
 * depth as a line — from GET <admin root>/rabbitmq-retry/history. Drawn by history-chart.ts.
 */
import { barsSvg, fold, lastKnown, lineSvg, total, type Fold } from './editor-history-chart';
import { str, type Translate } from '../../editor/index';
import type { JQ, JQStatic } from '../../editor/red';

declare const $: JQStatic;

export const HISTORY_URL = 'rabbitmq-retry/history';
/** Bars a chart draws at most, whatever the minutes shown. */
const BUCKETS = 60;
const CHART = { width: 132, height: 26 };

interface ConsumerHistory {
  consumer: string;
  name: string;
  queue: string;
  open: boolean;
  minutes: number;
  acked: number[];
  retried: number[];
  parked: number[];
  replayed: number[];
  duplicates: number[];
  depth: Array<number | null>;
}

type Series = 'acked' | 'retried' | 'parked' | 'replayed' | 'duplicates' | 'depth';

/** What each chart shows, in the order shown; its colour; counts add up, the depth keeps its last value. */
const CHARTS: ReadonlyArray<{ series: Series; color: string; how: Fold }> = [
  { series: 'retried', color: '#e08a00', how: 'sum' },
  { series: 'parked', color: '#d9534f', how: 'sum' },
  { series: 'acked', color: '#5a9e3c', how: 'sum' },
  { series: 'replayed', color: '#3b7bbf', how: 'sum' },
  { series: 'duplicates', color: '#8a8a8a', how: 'sum' },
  { series: 'depth', color: '#8e5bb5', how: 'last' },
];

function chart(t: Translate, h: ConsumerHistory, spec: (typeof CHARTS)[number]): JQ {
  const values = h[spec.series];
  const folded = fold(values, BUCKETS, spec.how);
  const label = t(`browser.history.${spec.series}`);
  const figure = spec.series === 'depth' ? lastKnown(values) : total(values);
  const shown = figure === null ? '–' : figure.toLocaleString();
  const title = `${label}: ${shown}`;
  const svg = spec.how === 'last' ? lineSvg(folded, { ...CHART, color: spec.color, title }) : barsSvg(folded, { ...CHART, color: spec.color, title });
  const cell = $('<div class="rmq-history-cell" style="min-width: 0;"></div>').attr('data-series', spec.series);
  $('<div style="display: flex; justify-content: space-between; gap: 4px; font-size: 11px;"></div>')
    .append($('<span>').text(label))
    .append($('<span class="rmq-history-figure" style="font-weight: bold;">').css('color', spec.color).text(shown))
    .appendTo(cell);
  $('<div style="color: var(--red-ui-secondary-text-color, #888);"></div>').append($(svg)).appendTo(cell);
  return cell;
}

export function historyView(t: Translate, box: JQ): { refresh(config: string): void } {
  let config = '';
  const head = $('<div style="display: flex; align-items: center; gap: 6px; margin: 4px 0;"></div>').appendTo(box);
  $('<b>').text(t('browser.history.title')).appendTo(head);
  const minutes = $('<select id="rmq-history-minutes" style="width: auto; height: 24px; padding: 0 4px; font-size: 11px;"></select>').appendTo(head);
  for (const m of [60, 360, 1440]) $('<option>').attr('value', String(m)).text(t(`browser.history.minutes${m}`)).appendTo(minutes);
  const body = $('<div class="rmq-history-consumers"></div>').appendTo(box);

  const render = (consumers: ConsumerHistory[]): void => {
    body.empty();
    if (consumers.length === 0) {
      $('<div class="form-tips">').text(t('browser.history.none')).appendTo(body);
      return;
    }
    for (const h of consumers) {
      const row = $('<div class="rmq-history-consumer" style="margin-bottom: 8px;"></div>').attr('data-consumer', h.consumer).appendTo(body);
      const name = `${h.name || h.consumer} · ${h.queue}${h.open ? '' : ` · ${t('browser.history.stopped')}`}`;
      $('<div style="font-size: 11px; margin-bottom: 2px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap;"></div>').text(name).attr('title', name).appendTo(row);
      const grid = $('<div style="display: grid; grid-template-columns: repeat(auto-fill, minmax(132px, 1fr)); gap: 4px 10px;"></div>').appendTo(row);
      for (const spec of CHARTS) chart(t, h, spec).appendTo(grid);
    }
  };
  const refresh = (next: string): void => {
    config = next;
    if (!config) return;
    $.getJSON(HISTORY_URL, { config, minutes: str(minutes.val()) || '60' })
      .done((answer) => render((answer as { consumers?: ConsumerHistory[] }).consumers ?? []))
      .fail(() => {
        body.empty();
        $('<div class="form-tips">').text(t('browser.history.failed')).appendTo(body);
      });
  };
  minutes.on('change', () => refresh(config));
  return { refresh };
}
