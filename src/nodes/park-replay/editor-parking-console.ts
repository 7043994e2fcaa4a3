/**
 * The parking browser's console for the people on call: "replay to…" (another exchange / routing key,
 * or back where published; all at once or paced, with canaries), behind a confirmation that says what
 * will happen; a search bar (park time, reason text, message id over a bounded window); and the paced
 * replays of the configuration with their progress, each cancellable.
 */
import { str, type Translate } from '../../editor/index';
import type { EditorRED, JQ, JQStatic } from '../../editor/red';
import { failureText, url, when, type Failure } from './editor-parking-rows';

declare const RED: EditorRED;
declare const $: JQStatic;

/** A job's progress as GET jobs answers it. */
interface JobStatus {
  id: string;
  state: string;
  by: string;
  selection: string;
  redirect?: { exchange: string; routingKey: string };
  replayed: number;
  canary: number;
  canaryReplayed: number;
  parkedAgain: number | null;
  rate: number;
  message: string | null;
  startedAt: string;
  finishedAt: string | null;
}

/** What a replay acts on, in the request's words: `messageIds`, a `group`, a `filter` (with its `window`), or nothing (everything). */
export type ReplaySelection = Record<string, unknown>;

const field = (label: string, input: JQ): JQ => $('<div class="form-row" style="margin-bottom: 6px;">').append($('<label style="width: 130px;">').text(label), input);
const numberInput = (id: string, value: string): JQ => $('<input type="text" style="width: 80px;">').attr('id', id).val(value);

/**
 * The "replay to…" tray: destination (back where published, or an exchange and routing key) and pace
 * (all at once, or a rate with canaries and a wait). Its button is the confirmation; `started` runs
 * once the admin API took the replay (a paced one answers with its job at once).
 */
export function replayDialog(t: Translate, config: string, selection: ReplaySelection, what: string, started: (failure?: Failure) => void): void {
  RED.tray.show({
    title: t('browser.console.title'),
    width: 520,
    buttons: [
      { id: 'rmq-replay-to-cancel', text: t('browser.cancel'), click: () => RED.tray.close() },
      { id: 'rmq-replay-to-confirm', text: t('browser.console.confirm'), class: 'primary', click: () => confirm() },
    ],
    open(tray) {
      const body = tray.find('.red-ui-tray-body').css({ padding: '12px' }).addClass('rmq-replay-to');
      $('<p class="rmq-replay-to-what" style="font-weight: bold;">').text(what).appendTo(body);
      const redirect = $('<input type="checkbox" id="rmq-replay-to-redirect" style="width: auto; margin: 0 4px 0 0;">');
      $('<div class="form-row">').append(redirect, $('<label for="rmq-replay-to-redirect" style="width: auto;">').text(t('browser.console.redirect'))).appendTo(body);
      const exchange = $('<input type="text" id="rmq-replay-to-exchange" style="width: 250px;">').attr('placeholder', t('browser.console.defaultExchange'));
      const routingKey = $('<input type="text" id="rmq-replay-to-routing-key" style="width: 250px;">');
      const target = $('<div class="rmq-replay-to-target">').append(field(t('browser.console.exchange'), exchange), field(t('browser.console.routingKey'), routingKey)).hide().appendTo(body);
      redirect.on('change', () => target.toggle(Boolean(redirect.prop('checked'))));
      const paced = $('<input type="checkbox" id="rmq-replay-to-paced" style="width: auto; margin: 0 4px 0 0;">');
      $('<div class="form-row">').append(paced, $('<label for="rmq-replay-to-paced" style="width: auto;">').text(t('browser.console.paced'))).appendTo(body);
      const pace = $('<div class="rmq-replay-to-pace">')
        .append(
          field(t('browser.console.rate'), numberInput('rmq-replay-to-rate', '10')),
          field(t('browser.console.canary'), numberInput('rmq-replay-to-canary', '5')),
          field(t('browser.console.canaryWait'), numberInput('rmq-replay-to-canary-wait', '30')),
          $('<div class="form-tips">').text(t('browser.console.pacedTip')),
        )
        .hide()
        .appendTo(body);
      paced.on('change', () => pace.toggle(Boolean(paced.prop('checked'))));
      $('<div class="form-tips" style="margin-top: 8px;">').text(t('browser.console.guarantee')).appendTo(body);
    },
  });
  function confirm(): void {
    const body: Record<string, unknown> = { ...selection };
    if ($('#rmq-replay-to-redirect').prop('checked')) body.redirect = { exchange: str($('#rmq-replay-to-exchange').val()), routingKey: str($('#rmq-replay-to-routing-key').val()) };
    const isPaced = Boolean($('#rmq-replay-to-paced').prop('checked'));
    if (isPaced) Object.assign(body, { rate: $('#rmq-replay-to-rate').val(), canary: $('#rmq-replay-to-canary').val(), canaryWait: $('#rmq-replay-to-canary-wait').val() });
    RED.tray.close();
    $.ajax({ url: url(config, isPaced ? 'paced' : 'replay'), type: 'POST', contentType: 'application/json', data: JSON.stringify(body) })
      .done((result) => {
        if (isPaced) RED.notify(t('browser.console.started'), 'success');
        else RED.notify(t('browser.done.replay', { count: result.replayed, left: result.remaining }), 'success');
        started();
      })
      .fail((xhr) => {
        RED.notify(failureText(t, xhr), 'error');
        started(xhr);
      });
  }
}

/** The search bar's filter as the admin API reads it; empty fields left out. */
export interface SearchFilter {
  from?: string;
  to?: string;
  reason?: string;
  messageId?: string;
}

/** A search bar in `container`: `search` gets the filter (undefined: cleared) and the window. */
export function searchBar(t: Translate, container: JQ, search: (filter: SearchFilter | undefined, window: string) => void): void {
  const bar = $('<div class="rmq-parking-search" style="display: flex; flex-wrap: wrap; gap: 4px; align-items: center; margin-bottom: 6px;">').appendTo(container);
  const input = (id: string, type: string, placeholder: string, width: string, label?: string): JQ => {
    const field = $(`<input type="${type}">`).attr('id', id).attr('placeholder', placeholder).attr('title', placeholder).css({ width, 'min-width': '0' });
    if (!label) return field.appendTo(bar);
    // A time or a number says what it is beside it (a date field shows no placeholder).
    $('<span style="display: inline-flex; align-items: center; gap: 4px; white-space: nowrap;">').append($('<span class="rmq-parking-search-label">').text(label), field).appendTo(bar);
    return field;
  };
  const reason = input('rmq-parking-search-reason', 'text', t('browser.console.searchReason'), '130px');
  const messageId = input('rmq-parking-search-id', 'text', t('browser.console.searchId'), '100px');
  const from = input('rmq-parking-search-from', 'datetime-local', t('browser.console.searchFrom'), '175px', t('browser.console.searchFrom'));
  const to = input('rmq-parking-search-to', 'datetime-local', t('browser.console.searchTo'), '175px', t('browser.console.searchTo'));
  const window = input('rmq-parking-search-window', 'text', t('browser.console.searchWindow'), '50px', t('browser.console.searchWindow')).val('5000');
  const iso = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? new Date(value).toISOString() : undefined);
  const button = (id: string, icon: string, key: string, onClick: () => void): JQ =>
    $('<button type="button" class="red-ui-button red-ui-button-small">').attr('id', id).append($('<i>').addClass(`fa ${icon}`)).append(` ${t(`browser.console.${key}`)}`).on('click', onClick).appendTo(bar);
  button('rmq-parking-search-go', 'fa-search', 'search', () => {
    const filter: SearchFilter = {};
    const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
    const fields = { reason: text(reason.val()), messageId: text(messageId.val()), from: iso(from.val()), to: iso(to.val()) };
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) filter[name as keyof SearchFilter] = value;
    search(Object.keys(filter).length > 0 ? filter : undefined, str(window.val()));
  });
  button('rmq-parking-search-clear', 'fa-times', 'clear', () => {
    for (const el of [reason, messageId, from, to]) el.val('');
    search(undefined, str(window.val()));
  });
}

/** A job in a person's words: state, progress, canaries, parked again. */
function jobLine(t: Translate, job: JobStatus): string {
  const where = job.redirect ? t('browser.console.to', { exchange: job.redirect.exchange || t('browser.console.defaultExchange'), key: job.redirect.routingKey }) : t('browser.console.back');
  const parts = [
    t(`browser.console.state.${job.state}`),
    t('browser.console.progress', { count: job.replayed, rate: job.rate }),
    t('browser.console.canaries', { count: job.canaryReplayed, of: job.canary }),
    job.parkedAgain === null ? t('browser.console.notLooked') : t('browser.console.parkedAgain', { count: job.parkedAgain }),
  ];
  return `${parts.join(' · ')} — ${job.selection}, ${where}, ${job.by}, ${when(job.startedAt)}`;
}

export interface JobsPanel {
  /** Looks at the jobs again now (and every second while one runs). */
  refresh(config: string): void;
}

/** The paced replays of the configuration in `container`: the latest few, a running one with its cancel button; `ended` runs when one ends. */
export function jobsPanel(t: Translate, container: JQ, ended: () => void): JobsPanel {
  const box = $('<div class="rmq-parking-jobs" style="margin-bottom: 6px; font-size: 12px;">').appendTo(container);
  let config = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = new Set<string>();
  const render = (jobs: JobStatus[]): void => {
    box.empty();
    for (const job of jobs.slice(0, 3)) {
      const active = job.finishedAt === null;
      const line = $('<div class="rmq-parking-job">')
        .attr('data-job', job.id)
        .attr('data-state', job.state)
        .css({ padding: '4px', 'margin-bottom': '2px', 'border-left': `3px solid ${job.state === 'stopped' || job.state === 'failed' ? 'var(--red-ui-text-color-error, #c00)' : active ? 'var(--red-ui-text-color-link, #0070c0)' : 'var(--red-ui-secondary-border-color, #ddd)'}` })
        .appendTo(box);
      $('<div class="rmq-parking-job-line">').text(jobLine(t, job)).appendTo(line);
      if (job.message) $('<div class="rmq-parking-job-message" style="font-weight: bold;">').text(job.message).appendTo(line);
      if (active) {
        $('<button type="button" class="red-ui-button red-ui-button-small rmq-parking-job-cancel">')
          .append($('<i class="fa fa-stop">'))
          .append(` ${t('browser.console.cancelJob')}`)
          .on('click', () => {
            $.ajax({ url: url(config, `jobs/${encodeURIComponent(job.id)}/cancel`), type: 'POST', contentType: 'application/json', data: '{}' })
              .done(() => look())
              .fail((xhr) => RED.notify(failureText(t, xhr), 'error'));
          })
          .appendTo(line);
      }
    }
  };
  const look = (): void => {
    clearTimeout(timer);
    if (!config) return;
    $.getJSON(url(config, 'jobs'))
      .done((answer) => {
        const jobs = (answer.jobs ?? []) as JobStatus[];
        render(jobs);
        const now = new Set(jobs.filter((job) => job.finishedAt === null).map((job) => job.id));
        if ([...running].some((id) => !now.has(id))) ended();
        running = now;
        if (now.size > 0) timer = setTimeout(look, 1000);
      })
      .fail(() => box.empty());
  };
  return {
    refresh(next: string): void {
      if (next !== config) running = new Set();
      config = next;
      look();
    },
  };
}
