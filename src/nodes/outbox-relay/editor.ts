/** The outbox-relay dialog: its broker, database and table, how it polls, retries and keeps sent rows. */
import { fillSelect, str, validators as v, type Translate } from '../../editor/index';
import { choices, numberProperty } from '../shared/editor-properties';
import { CATEGORY, COLOR, italicWhenNamed, tableName } from '../../editor/common';
import type { NodeDefinition } from '../../editor/red';
import { NODE_TYPE } from '../shared/node-types';
import { RELAY_NUMBERS } from './properties';

export function outboxRelay(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: {
      name: { value: '' },
      broker: { value: '', type: NODE_TYPE.retryBroker, required: true, label: t('label.broker') },
      postgres: { value: '', type: NODE_TYPE.retryPostgres, required: true, label: t('label.postgres') },
      table: { value: 'rabbitmq_retry_outbox', label: t('label.table'), validate: tableName(t) },
      mode: { value: 'declare', validate: v.oneOf(choices.topologyModes) },
      batchSize: numberProperty(RELAY_NUMBERS.batchSize, t('label.batchSize')),
      pollSeconds: numberProperty(RELAY_NUMBERS.pollSeconds, t('label.pollSeconds')),
      maxAttempts: numberProperty(RELAY_NUMBERS.maxAttempts, t('label.maxAttempts')),
      backoffSeconds: numberProperty(RELAY_NUMBERS.backoffSeconds, t('label.backoffSeconds')),
      backoffMaxSeconds: numberProperty(RELAY_NUMBERS.backoffMaxSeconds, t('label.backoffMaxSeconds')),
      retentionDays: numberProperty(RELAY_NUMBERS.retentionDays, t('label.retentionDays')),
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
