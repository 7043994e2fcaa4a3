/**
 * The retry-config dialog: the topology's fields, each checked by the runtime's own rules (the whole
 * definition through topologyProblemsOf, as the runtime refuses it at deploy), and the "check against
 * the broker" table, and the topology exported as a RabbitMQ definitions file.
 */
import { argumentValueText, choices, fillSelect, migrate, numberProperty, showReasons, str, tabs, topologyProblemsOf, validators as v, withVersion, fail, type EditorNode, type Translate, type Validator } from '../../editor/index';
import type { EditorRED, JQ, JQStatic, NodeDefinition } from '../../editor/red';
import { errorRulesEditor, errorRulesOf, errorRulesValidator } from '../../editor/nodes/error-rules';
import { DELAYED_RETRY_CHOICES } from '../../lib/topology/broker-retry';
import { runsBrokerRetry } from '../../lib/topology/broker-version';
import { NODE_TYPE } from '../shared/node-types';

declare const RED: EditorRED;
declare const $: JQStatic;

interface CheckedObject {
  kind: string;
  name: string;
  state: 'ok' | 'missing' | 'differs' | 'error';
  differences: Array<{ argument: string; config: unknown; broker: unknown }>;
  problems: string[];
}

const FIELDS = ['name', 'broker', 'mode', 'mainExchange', 'mainExchangeType', 'mainQueue', 'routingKeys', 'alternateExchange', 'unroutedQueue', 'retryExchange', 'retryExchangeType', 'retryQueue', 'retryDelay', 'delayedRetry', 'retryJitter', 'parkingQueue', 'maxAttempts', 'maxAge', 'partitions', 'partitionRouting', 'mainQueueArgs', 'retryQueueArgs', 'parkingQueueArgs'];

/** The dialog's values while it is open, the saved ones otherwise. */
function values(node: EditorNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of FIELDS) {
    const input = $(`#node-config-input-${key}`);
    out[key] = input.length > 0 ? input.val() : node[key];
  }
  return out;
}

/**
 * A field's own rule, then the whole definition as the runtime checks it: the problems that name
 * `topic` (e.g. `queue argument`, `alternate exchange`) turn this field red with their sentence.
 */
function withTopology(own: Validator, topic: RegExp): Validator {
  return function (this: EditorNode, value, opt) {
    const mine = own.call(this, value, opt);
    if (mine !== true) return mine;
    const problems = topologyProblemsOf(values(this)).filter((p) => topic.test(p));
    return problems.length === 0 || fail(opt, problems.join('; '));
  };
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
}

/**
 * Broker-native delayed retry is offered only where the broker can run it: once a check has told the
 * broker's version, an older one disables the choice (unless chosen already: the tip says why it fails).
 */
function offerBrokerRetry(t: (key: string, args?: Record<string, unknown>) => string, told: string | undefined): void {
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
function exportDefinitions(t: (key: string, args?: Record<string, unknown>) => string, node: EditorNode): void {
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

function checkTopology(t: (key: string, args?: Record<string, unknown>) => string, node: EditorNode): void {
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

/** An existing main queue (check mode) may be bound to the broker's own amq.* exchanges: checked, never declared. */
function brokerOwnWhenExisting(validator: Validator): Validator {
  return function (this: EditorNode, value, opt) {
    const box = $('#node-config-input-existingQueue');
    const mode = $('#node-config-input-mode');
    const existing = box.length > 0 ? box.is(':checked') && mode.val() === 'check' : this.existingQueue === true && this.mode === 'check';
    return existing && str(value).startsWith('amq.') ? true : validator.call(this, value, opt);
  };
}

export function retryConfig(t: Translate): NodeDefinition {
  const names = /queues and retry delays must all be different|queue name is empty/;
  return {
    category: 'config',
    defaults: withVersion(NODE_TYPE.retryConfig, {
      name: { value: '' },
      broker: { value: '', type: NODE_TYPE.retryBroker, required: true, label: t('prop.broker') },
      mode: { value: 'declare', label: t('prop.mode'), validate: v.oneOf(choices.topologyModes) },
      // Check mode on a queue another package made (a converted flow): only the retry and parking queues are declared.
      existingQueue: { value: false },
      mainExchange: { value: '', label: t('prop.mainExchange'), validate: brokerOwnWhenExisting(v.name()) },
      mainExchangeType: { value: 'direct', label: t('prop.mainExchangeType'), validate: v.oneOf(choices.exchangeTypes) },
      mainQueue: { value: '', required: true, label: t('prop.mainQueue'), validate: withTopology(v.name(), names) },
      routingKeys: { value: '', label: t('prop.routingKeys'), validate: withTopology(v.routingKeys, /routing keys/) },
      alternateExchange: { value: '', label: t('prop.alternateExchange'), validate: withTopology(v.name(), /alternate exchange/) },
      unroutedQueue: { value: '', label: t('prop.unroutedQueue'), validate: v.name() },
      retryExchange: { value: '', label: t('prop.retryExchange'), validate: withTopology(v.name(), /retry exchange/) },
      retryExchangeType: { value: 'fanout', label: t('prop.retryExchangeType'), validate: v.oneOf(choices.exchangeTypes) },
      retryQueue: { value: '', label: t('prop.retryQueue'), validate: withTopology(v.name(), names) },
      retryDelay: { value: '5000', label: t('prop.retryDelay'), validate: withTopology(v.delays, /retry delays of at least|jitter/) },
      delayedRetry: { value: 'queues', label: t('prop.delayedRetry'), validate: withTopology(v.oneOf(DELAYED_RETRY_CHOICES), /broker-native/) },
      retryJitter: numberProperty(NODE_TYPE.retryConfig, 'retryJitter', t('prop.retryJitter')),
      parkingQueue: { value: '', label: t('prop.parkingQueue'), validate: withTopology(v.name(), names) },
      maxAttempts: numberProperty(NODE_TYPE.retryConfig, 'maxAttempts', t('prop.maxAttempts')),
      maxAge: numberProperty(NODE_TYPE.retryConfig, 'maxAge', t('prop.maxAge')),
      // Partitioned ordered mode (issue 42): 0 or 1 is one main queue.
      partitions: { ...numberProperty(NODE_TYPE.retryConfig, 'partitions', t('prop.partitions')), validate: withTopology(v.number(NODE_TYPE.retryConfig, 'partitions'), /partition/) },
      partitionRouting: { value: 'auto', label: t('prop.partitionRouting'), validate: v.oneOf(choices.partitionRoutings) },
      // Arguments the topology sets itself (x-dead-letter-exchange, x-message-ttl, …) are refused here, as at deploy.
      mainQueueArgs: { value: '{}', label: t('prop.mainQueueArgs'), validate: withTopology(v.queueArguments, /^main queue argument|quorum main queue/) },
      retryQueueArgs: { value: '{}', label: t('prop.retryQueueArgs'), validate: withTopology(v.queueArguments, /^retry queue argument/) },
      parkingQueueArgs: { value: '{}', label: t('prop.parkingQueueArgs'), validate: withTopology(v.queueArguments, /^parking queue argument/) },
      // Ordered error rules (plain data in the flow): what a retry-settle makes of a failure.
      errorRules: { value: [], label: t('prop.errorRules'), validate: errorRulesValidator() },
    }),
    label() {
      return str(this.name) || str(this.mainQueue) || t('label.unnamed');
    },
    oneditprepare() {
      const node = this;
      tabs(
        'retry-config-tabs',
        ['connection', 'topology', 'policy'].map((id) => ({ id: `retry-config-tab-${id}`, label: t(`tabs.${id}`) })),
      );
      migrate(node, NODE_TYPE.retryConfig, 'node-config-input');
      $('#retry-config-check-button').on('click', () => checkTopology(t, node));
      $('#retry-config-export-button').on('click', () => exportDefinitions(t, node));
      fillSelect('#node-config-input-mode', choices.topologyModes, (m) => t(`mode.${m}`), node.mode);
      fillSelect('#node-config-input-partitionRouting', choices.partitionRoutings, (r) => t(`partitionRouting.${r}`), node.partitionRouting);
      fillSelect('#node-config-input-delayedRetry', DELAYED_RETRY_CHOICES, (c) => t(`delayedRetry.${c}`), node.delayedRetry ?? 'queues');
      // Choosing broker-native retry asks the broker its version (the check does), so an old one is said at once.
      $('#node-config-input-delayedRetry').on('change', () => {
        if (text('delayedRetry') === 'broker') checkTopology(t, node);
        else offerBrokerRetry(t, undefined);
      });
      for (const field of ['mainExchangeType', 'retryExchangeType']) fillSelect(`#node-config-input-${field}`, choices.exchangeTypes, (type) => type, node[field]);
      for (const field of ['mainQueueArgs', 'retryQueueArgs', 'parkingQueueArgs']) {
        const input = $(`#node-config-input-${field}`);
        if (input.val() === '') input.val('{}');
        input.typedInput({ default: 'json', types: ['json'] });
      }
      const text = (id: string): string => str($(`#node-config-input-${id}`).val());
      const refresh = (): void => {
        const main = text('mainQueue') || t('label.mainQueueToken');
        $('#node-config-input-retryQueue').attr('placeholder', `${main}.retry`);
        $('#node-config-input-parkingQueue').attr('placeholder', `${main}.parking`);
        const hasMainExchange = text('mainExchange') !== '';
        $('.retry-config-main-exchange').toggle(hasMainExchange);
        $('#node-config-input-unroutedQueue').attr('placeholder', `${text('mainExchange') || t('label.mainExchangeToken')}.unrouted`);
        $('.retry-config-unrouted').toggle(hasMainExchange && text('alternateExchange') !== '');
        $('.retry-config-retry-exchange').toggle(text('retryExchange') !== '');
        $('#retry-config-mode-tip-declare').toggle(text('mode') === 'declare');
        $('#retry-config-mode-tip-check').toggle(text('mode') === 'check');
        const partitions = Number(text('partitions'));
        $('.retry-config-partitioned').toggle(partitions > 1);
        if (partitions > 1) $('#retry-config-partitions-tip').text(t('tip.partitions', { first: `${main}.0`, last: `${main}.${partitions - 1}`, exchange: `${main}.partitions` }));
        $('.retry-config-existing-queue').toggle(text('mode') === 'check');
        const brokerRetry = text('delayedRetry') === 'broker';
        $('.retry-config-jitter').toggle(!brokerRetry);
        $('.retry-config-broker-retry').toggle(brokerRetry);
      };
      $('#node-config-input-mainQueue, #node-config-input-partitions, #node-config-input-mainExchange, #node-config-input-retryExchange, #node-config-input-alternateExchange').on('change keyup', refresh);
      $('#node-config-input-mode, #node-config-input-delayedRetry').on('change', refresh);
      refresh();
      errorRulesEditor(t, node);
      showReasons(node, 'node-config-input');
    },
    oneditsave() {
      this.errorRules = errorRulesOf();
    },
  };
}
