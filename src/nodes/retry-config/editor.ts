/**
 * The retry-config dialog: the topology's fields, each checked by the runtime's own rules (the whole
 * definition through topologyProblemsOf, as the runtime refuses it at deploy), and the "check against
 * the broker" table, and the topology exported as a RabbitMQ definitions file (editor-check.ts).
 */
import { fillSelect, showReasons, str, tabs, validators as v, fail, type EditorNode, type Translate, type Validator } from '../../editor/index';
import { choices, migrate, numberProperty, numberValidator, withVersion } from '../shared/editor-properties';
import { topologyProblemsOf } from '../shared/topology-definition';
import type { JQStatic, NodeDefinition } from '../../editor/red';
import { errorRulesEditor, errorRulesOf, errorRulesValidator } from './editor-error-rules';
import { DELAYED_RETRY_CHOICES } from '../../lib/topology/broker-retry';
import { QUEUE_TYPES, queueTypeOf } from '../../lib/topology/queue-type';
import { NODE_TYPE } from '../shared/node-types';
import { checkTopology, exportDefinitions, offerBrokerRetry, values } from './editor-check';
import { CONFIG_NUMBERS, CONFIG_VERSIONS } from '../shared/config-properties';

declare const $: JQStatic;

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

/** An existing main queue (check mode) may be bound to the broker's own amq.* exchanges: checked, never declared. */
function brokerOwnWhenExisting(validator: Validator): Validator {
  return function (this: EditorNode, value, opt) {
    const box = $('#node-config-input-existingQueue');
    const mode = $('#node-config-input-mode');
    const existing = box.length > 0 ? box.is(':checked') && mode.val() === 'check' : this.existingQueue === true && this.mode === 'check';
    return existing && str(value).startsWith('amq.') ? true : validator.call(this, value, opt);
  };
}

function inputText(id: string): string {
  return str($(`#node-config-input-${id}`).val());
}

/** Shows the fields the dialog's values use (a main exchange's, partitions', broker-native retry's…) and their placeholders. */
function showFields(t: Translate): void {
  const main = inputText('mainQueue') || t('label.mainQueueToken');
  $('#node-config-input-retryQueue').attr('placeholder', `${main}.retry`);
  $('#node-config-input-parkingQueue').attr('placeholder', `${main}.parking`);
  const hasMainExchange = inputText('mainExchange') !== '';
  $('.retry-config-main-exchange').toggle(hasMainExchange);
  $('#node-config-input-unroutedQueue').attr('placeholder', `${inputText('mainExchange') || t('label.mainExchangeToken')}.unrouted`);
  $('.retry-config-unrouted').toggle(hasMainExchange && inputText('alternateExchange') !== '');
  $('.retry-config-retry-exchange').toggle(inputText('retryExchange') !== '');
  $('#retry-config-mode-tip-declare').toggle(inputText('mode') === 'declare');
  $('#retry-config-mode-tip-check').toggle(inputText('mode') === 'check');
  const partitions = Number(inputText('partitions'));
  $('.retry-config-partitioned').toggle(partitions > 1);
  if (partitions > 1) $('#retry-config-partitions-tip').text(t('tip.partitions', { first: `${main}.0`, last: `${main}.${partitions - 1}`, exchange: `${main}.partitions` }));
  $('.retry-config-existing-queue').toggle(inputText('mode') === 'check');
  const brokerRetry = inputText('delayedRetry') === 'broker';
  $('.retry-config-jitter').toggle(!brokerRetry);
  $('.retry-config-broker-retry').toggle(brokerRetry);
}

export function retryConfig(t: Translate): NodeDefinition {
  const names = /queues and retry delays must all be different|queue name is empty/;
  return {
    category: 'config',
    defaults: withVersion(CONFIG_VERSIONS, {
      name: { value: '' },
      broker: { value: '', type: NODE_TYPE.retryBroker, required: true, label: t('prop.broker') },
      mode: { value: 'declare', label: t('prop.mode'), validate: v.oneOf(choices.topologyModes) },
      // Check mode on a queue another package made (a converted flow): only the retry and parking queues are declared.
      existingQueue: { value: false },
      mainExchange: { value: '', label: t('prop.mainExchange'), validate: brokerOwnWhenExisting(v.name()) },
      mainExchangeType: { value: 'direct', label: t('prop.mainExchangeType'), validate: v.oneOf(choices.exchangeTypes) },
      mainQueue: { value: '', required: true, label: t('prop.mainQueue'), validate: withTopology(v.name(), names) },
      // Issue 53: classic or quorum for the main (every partition) and parking queues; a saved node without it: its extra arguments say.
      queueType: { value: 'classic', label: t('prop.queueType'), validate: withTopology(v.oneOf(['', ...QUEUE_TYPES]), /queue type/) }, // '' (saved before the field, or converted): its extra arguments decide
      routingKeys: { value: '', label: t('prop.routingKeys'), validate: withTopology(v.routingKeys, /routing keys/) },
      alternateExchange: { value: '', label: t('prop.alternateExchange'), validate: withTopology(v.name(), /alternate exchange/) },
      unroutedQueue: { value: '', label: t('prop.unroutedQueue'), validate: v.name() },
      retryExchange: { value: '', label: t('prop.retryExchange'), validate: withTopology(v.name(), /retry exchange/) },
      retryExchangeType: { value: 'fanout', label: t('prop.retryExchangeType'), validate: v.oneOf(choices.exchangeTypes) },
      retryQueue: { value: '', label: t('prop.retryQueue'), validate: withTopology(v.name(), names) },
      retryDelay: { value: '5000', label: t('prop.retryDelay'), validate: withTopology(v.delays, /retry delays of at least|jitter/) },
      delayedRetry: { value: 'queues', label: t('prop.delayedRetry'), validate: withTopology(v.oneOf(DELAYED_RETRY_CHOICES), /broker-native/) },
      retryJitter: numberProperty(CONFIG_NUMBERS.retryJitter, t('prop.retryJitter')),
      parkingQueue: { value: '', label: t('prop.parkingQueue'), validate: withTopology(v.name(), names) },
      maxAttempts: numberProperty(CONFIG_NUMBERS.maxAttempts, t('prop.maxAttempts')),
      maxAge: numberProperty(CONFIG_NUMBERS.maxAge, t('prop.maxAge')),
      // Partitioned ordered mode (issue 42): 0 or 1 is one main queue.
      partitions: { ...numberProperty(CONFIG_NUMBERS.partitions, t('prop.partitions')), validate: withTopology(numberValidator(CONFIG_NUMBERS.partitions), /partition/) },
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
      migrate(node, CONFIG_VERSIONS, CONFIG_NUMBERS, 'node-config-input');
      $('#retry-config-check-button').on('click', () => checkTopology(t, node));
      $('#retry-config-export-button').on('click', () => exportDefinitions(t, node));
      fillSelect('#node-config-input-mode', choices.topologyModes, (m) => t(`mode.${m}`), node.mode);
      fillSelect('#node-config-input-partitionRouting', choices.partitionRoutings, (r) => t(`partitionRouting.${r}`), node.partitionRouting);
      // A node saved before the field shows what its extra arguments make the main queue, so saving it changes nothing.
      fillSelect('#node-config-input-queueType', QUEUE_TYPES, (q) => t(`queueType.${q}`), queueTypeOf(node.queueType) ?? (/"x-queue-type"\s*:\s*"quorum"/.test(str(node.mainQueueArgs)) ? 'quorum' : 'classic'));
      fillSelect('#node-config-input-delayedRetry', DELAYED_RETRY_CHOICES, (c) => t(`delayedRetry.${c}`), node.delayedRetry ?? 'queues');
      // Choosing broker-native retry asks the broker its version (the check does), so an old one is said at once.
      $('#node-config-input-delayedRetry').on('change', () => {
        if (inputText('delayedRetry') === 'broker') {
          // Broker-native retry runs on a quorum main queue only: the queue type follows the choice.
          $('#node-config-input-queueType').val('quorum');
          checkTopology(t, node);
        } else offerBrokerRetry(t, undefined);
      });
      for (const field of ['mainExchangeType', 'retryExchangeType']) fillSelect(`#node-config-input-${field}`, choices.exchangeTypes, (type) => type, node[field]);
      for (const field of ['mainQueueArgs', 'retryQueueArgs', 'parkingQueueArgs']) {
        const input = $(`#node-config-input-${field}`);
        if (input.val() === '') input.val('{}');
        input.typedInput({ default: 'json', types: ['json'] });
      }
      const refresh = (): void => showFields(t);
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
