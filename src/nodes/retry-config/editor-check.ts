/**
 * The retry-config dialog's buttons that ask the runtime: "Check topology" (the dialog's values against
 * the chosen broker, shown as a table) and "Export definitions" (a RabbitMQ definitions file).
 */
import { argumentValueText, str, type EditorNode } from '../../editor/index';
import type { EditorRED, JQ, JQStatic } from '../../editor/red';
import { runsBrokerRetry } from '../../lib/topology/broker-version';

declare const RED: EditorRED;
declare const $: JQStatic;

interface CheckedObject {
  kind: string;
  name: string;
  state: 'ok' | 'missing' | 'differs' | 'error';
  differences: Array<{ argument: string; config: unknown; broker: unknown }>;
  problems: string[];
}

const FIELDS = ['name', 'broker', 'mode', 'mainExchange', 'mainExchangeType', 'mainQueue', 'queueType', 'routingKeys', 'alternateExchange', 'unroutedQueue', 'retryExchange', 'retryExchangeType', 'retryQueue', 'retryDelay', 'delayedRetry', 'retryJitter', 'parkingQueue', 'maxAttempts', 'maxAge', 'partitions', 'partitionRouting', 'mainQueueArgs', 'retryQueueArgs', 'parkingQueueArgs'];

/** The dialog's values while it is open, the saved ones otherwise. */
export function values(node: EditorNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of FIELDS) {
    const input = $(`#node-config-input-${key}`);
    out[key] = input.length > 0 ? input.val() : node[key];
  }
  return out;
}


function show(t: (key: string) => string, value: unknown, argument: string): string {
  return argumentValueText(value, argument, { none: t('check.none'), defaultExchange: t('check.defaultExchange') });
}

interface CheckAnswer {
  broker: string;
  /** The broker's version, when it said it. */
  version?: string;
  compared: boolean;
  uncompared?: string;
  objects: CheckedObject[];
  /** What the broker's version refuses (a declare would get a 406) or deprecates, in English from the runtime. */
  refused?: string[];
  deprecated?: string[];
  /** The classic main and parking queues, when the broker is a cluster of several nodes (issue 53). */
  classicOnCluster?: { queues: string[]; nodes: string[] };
}

/** A cluster of several nodes with classic main or parking queues: said above the table, with what to choose. */
function renderClassicOnCluster(t: (key: string, args?: Record<string, unknown>) => string, box: JQ, found: CheckAnswer['classicOnCluster']): void {
  if (!found) return;
  const text = t('check.classicOnCluster', { size: found.nodes.length, nodes: found.nodes.join(', '), queues: found.queues.join(', ') });
  $('<div>').addClass('form-tips retry-config-check-classic-on-cluster').css('color', '#c80').text(text).appendTo(box);
}

/**
 * Broker-native delayed retry is offered only where the broker can run it: once a check has told the
 * broker's version, an older one disables the choice (unless chosen already: the tip says why it fails).
 */
export function offerBrokerRetry(t: (key: string, args?: Record<string, unknown>) => string, told: string | undefined): void {
  const select = $('#node-config-input-delayedRetry');
  // Kept on the select while the dialog is open: choosing again re-applies what the broker said.
  if (told !== undefined) select.data('broker-version', told);
  const kept = select.data('broker-version');
  const version = told ?? (typeof kept === 'string' ? kept : undefined);
  const tooOld = version !== undefined && !runsBrokerRetry(version);
  select.find('option[value="broker"]').prop('disabled', tooOld && select.val() !== 'broker');
  $('.retry-config-broker-too-old').text(tooOld ? t('tip.brokerTooOld', { version }) : '').toggle(tooOld);
}

/** One row per exchange and queue: exists / missing / argument differs, with expected vs actual. */
function renderCheck(t: (key: string, args?: Record<string, unknown>) => string, answer: CheckAnswer): void {
  offerBrokerRetry(t, answer.version);
  const box = $('#retry-config-check-result').empty();
  $('<div>').addClass('form-tips').text(t('check.on', { broker: answer.broker })).appendTo(box);
  // Why the management API tried at the broker's host (its URL's variable unset) was not read, in English from the runtime.
  if (!answer.compared) $('<div>').addClass('form-tips').text(t('check.notCompared') + (answer.uncompared ? ` (${answer.uncompared})` : '')).appendTo(box);
  for (const text of answer.refused ?? []) $('<div>').addClass('form-tips retry-config-check-refused').css('color', '#c33').text(text).appendTo(box);
  for (const text of answer.deprecated ?? []) $('<div>').addClass('form-tips retry-config-check-deprecated').css('color', '#c80').text(text).appendTo(box);
  renderClassicOnCluster(t, box, answer.classicOnCluster);
  const table = $('<table>').addClass('retry-config-check-table').css({ width: '100%', 'border-collapse': 'collapse', 'margin-top': '6px' }).appendTo(box);
  for (const o of answer.objects) {
    const row = $('<tr>').attr('data-object', `${o.kind}:${o.name}`).attr('data-state', o.state).css('border-top', '1px solid var(--red-ui-secondary-border-color, #ddd)').appendTo(table);
    const icon = { ok: 'fa-check-circle', missing: 'fa-times-circle', differs: 'fa-exclamation-triangle', error: 'fa-times-circle' }[o.state];
    const color = o.state === 'ok' ? '#5a8' : o.state === 'differs' ? '#c80' : '#c33';
    $('<td>')
      .css({ padding: '4px', 'white-space': 'nowrap' })
      .append($('<i>').addClass(`fa ${icon}`).css('color', color))
      .append(` ${t(`check.state.${o.state}`)}`)
      .appendTo(row);
    $('<td>').css('padding', '4px').text(`${t(`check.kind.${o.kind}`)} ${o.name}`).appendTo(row);
    const details: JQ = $('<td>').css('padding', '4px').appendTo(row);
    for (const d of o.differences) {
      $('<div>')
        .addClass('retry-config-check-diff')
        .text(t('check.differs', { argument: d.argument, expected: show(t, d.config, d.argument), actual: show(t, d.broker, d.argument) }))
        .appendTo(details);
    }
    if (o.state === 'missing' || o.state === 'error') details.text(o.problems.join('; '));
  }
}

/** A failed request of the dialog's buttons: the runtime's sentence (the validator's for a 400) under them. */
function failed(t: (key: string, args?: Record<string, unknown>) => string, key: string, button: JQ, xhr: { responseJSON?: { error?: string }; statusText: string }): void {
  button.prop('disabled', false);
  const error = xhr.responseJSON?.error ?? xhr.statusText;
  $('#retry-config-check-result')
    .empty()
    .append($('<div>').addClass('form-tips retry-config-check-failed').text(t(key, { error })));
}

/** The chosen broker node's values (unsaved edits included) and the credentials the dialog holds, or undefined without a broker. */
function chosenBroker(): { broker: Record<string, unknown>; credentials: { user?: string; password?: string } } | undefined {
  const broker = RED.nodes.node(str($('#node-config-input-broker').val()));
  if (!broker) return undefined;
  const brokerValues: Record<string, unknown> = { id: broker.id };
  const brokerDefaults = (broker._def as { defaults: Record<string, unknown> }).defaults;
  for (const key of Object.keys(brokerDefaults)) brokerValues[key] = broker[key];
  const given = broker.credentials as { user?: string; password?: string } | undefined;
  return { broker: brokerValues, credentials: given ? { user: given.user, password: given.password } : {} };
}

/**
 * "Export definitions": the runtime turns the dialog's values (saved or not) into a RabbitMQ
 * definitions file in the chosen broker's vhost ('/' without one); the browser saves it. No
 * credentials are sent: the export touches no broker.
 */
export function exportDefinitions(t: (key: string, args?: Record<string, unknown>) => string, node: EditorNode): void {
  const broker = chosenBroker()?.broker;
  const button = $('#retry-config-export-button').prop('disabled', true);
  $.ajax({ url: 'rabbitmq-retry/topology-definitions', type: 'POST', contentType: 'application/json', data: JSON.stringify(broker ? { config: values(node), broker } : { config: values(node) }) })
    .done((definitions, _status, xhr) => {
      button.prop('disabled', false);
      const file = /filename="([^"]+)"/.exec(xhr.getResponseHeader('Content-Disposition') ?? '')?.[1] ?? 'definitions.json';
      const link = $('<a>')
        .attr('href', `data:application/json;charset=utf-8,${encodeURIComponent(`${JSON.stringify(definitions, null, 2)}\n`)}`)
        .attr('download', file)
        .css('display', 'none')
        .appendTo($('body'));
      link.get(0)?.click();
      link.remove();
      $('#retry-config-check-result')
        .empty()
        .append($('<div>').addClass('form-tips retry-config-export-done').text(t('export.done', { file })));
    })
    .fail((xhr) => failed(t, 'export.failed', button, xhr));
}

export function checkTopology(t: (key: string, args?: Record<string, unknown>) => string, node: EditorNode): void {
  const chosen = chosenBroker();
  const box = $('#retry-config-check-result').empty();
  if (!chosen) {
    $('<div>').addClass('form-tips').text(t('check.noBroker')).appendTo(box);
    return;
  }
  const { broker: brokerValues, credentials } = chosen;
  const button = $('#retry-config-check-button').prop('disabled', true);
  $('<div>').addClass('form-tips').append($('<i>').addClass('fa fa-spinner fa-spin')).append(` ${t('check.running')}`).appendTo(box);
  $.ajax({ url: 'rabbitmq-retry/check-topology', type: 'POST', contentType: 'application/json', data: JSON.stringify({ config: values(node), broker: brokerValues, credentials }) })
    .done((answer) => {
      button.prop('disabled', false);
      renderCheck(t, answer as unknown as CheckAnswer);
    })
    .fail((xhr) => failed(t, 'check.failed', button, xhr));
}
