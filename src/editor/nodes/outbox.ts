/** The dialogs of the outbox nodes: outbox-write and outbox-relay. */
import { choices, fillSelect, numberProperty, str, validators as v, type Translate } from '../index';
import type { JQStatic, NodeDefinition } from '../red';
import { CATEGORY, COLOR, italicWhenNamed, tableName } from './common';

declare const $: JQStatic;

export function outboxWrite(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: {
      name: { value: '' },
      postgres: { value: '', type: 'retry-postgres', required: true, label: t('label.postgres') },
      table: { value: 'rabbitmq_retry_outbox', label: t('label.table'), validate: tableName(t) },
      mode: { value: 'declare', validate: v.oneOf(choices.topologyModes) },
      event: { value: true },
      exchange: { value: '', label: t('label.exchange'), validate: v.shortString },
      routingKey: { value: '', label: t('label.routingKey'), validate: v.shortString },
      persistent: { value: true },
      dedupe: { value: '', type: 'retry-dedupe', required: false, label: t('label.dedupe') },
    },
    inputs: 1,
    outputs: 1,
    icon: 'db.svg',
    paletteLabel: () => t('paletteLabel'),
    inputLabels: () => t('inputLabel'),
    outputLabels: () => t('outputLabel'),
    label() {
      if (this.name) return str(this.name);
      return this.event === false ? t('nodeLabel.sql') : t('nodeLabel.event', { exchange: str(this.exchange) || 'msg.exchange' });
    },
    labelStyle: italicWhenNamed,
    oneditprepare() {
      fillSelect('#node-input-mode', choices.topologyModes, (m) => t(`mode.${m}`), this.mode || 'declare');
      $('#node-input-event')
        .on('change', () => $('.outbox-write-event').toggle($('#node-input-event').prop('checked') === true))
        .trigger('change');
    },
  };
}

export function outboxRelay(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: {
      name: { value: '' },
      broker: { value: '', type: 'retry-broker', required: true, label: t('label.broker') },
      postgres: { value: '', type: 'retry-postgres', required: true, label: t('label.postgres') },
      table: { value: 'rabbitmq_retry_outbox', label: t('label.table'), validate: tableName(t) },
      mode: { value: 'declare', validate: v.oneOf(choices.topologyModes) },
      batchSize: numberProperty('outbox-relay', 'batchSize', t('label.batchSize')),
      pollSeconds: numberProperty('outbox-relay', 'pollSeconds', t('label.pollSeconds')),
      maxAttempts: numberProperty('outbox-relay', 'maxAttempts', t('label.maxAttempts')),
      backoffSeconds: numberProperty('outbox-relay', 'backoffSeconds', t('label.backoffSeconds')),
      backoffMaxSeconds: numberProperty('outbox-relay', 'backoffMaxSeconds', t('label.backoffMaxSeconds')),
      retentionDays: numberProperty('outbox-relay', 'retentionDays', t('label.retentionDays')),
      deleteSent: { value: false },
      ordered: { value: false },
    },
    inputs: 1,
    outputs: 1,
    icon: 'rabbitmq-retry-publish.svg',
    paletteLabel: () => t('paletteLabel'),
    inputLabels: () => t('inputLabel'),
    outputLabels: () => t('outputLabel'),
    label() {
      return str(this.name) || t('nodeLabel', { table: str(this.table) || 'rabbitmq_retry_outbox' });
    },
    labelStyle: italicWhenNamed,
    oneditprepare() {
      fillSelect('#node-input-mode', choices.topologyModes, (m) => t(`mode.${m}`), this.mode || 'declare');
    },
  };
}
