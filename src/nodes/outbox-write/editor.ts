/** The outbox-write dialog: its database and table, and the event it writes beside the msg's statements. */
import { fillSelect, str, validators as v, type Translate } from '../../editor/index';
import { choices } from '../shared/editor-properties';
import { CATEGORY, COLOR, italicWhenNamed, tableName } from '../../editor/common';
import type { JQStatic, NodeDefinition } from '../../editor/red';
import { NODE_TYPE } from '../shared/node-types';

declare const $: JQStatic;

export function outboxWrite(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: {
      name: { value: '' },
      postgres: { value: '', type: NODE_TYPE.retryPostgres, required: true, label: t('label.postgres') },
      table: { value: 'rabbitmq_retry_outbox', label: t('label.table'), validate: tableName(t) },
      mode: { value: 'declare', validate: v.oneOf(choices.topologyModes) },
      event: { value: true },
      exchange: { value: '', label: t('label.exchange'), validate: v.shortString },
      routingKey: { value: '', label: t('label.routingKey'), validate: v.shortString },
      persistent: { value: true },
      dedupe: { value: '', type: NODE_TYPE.retryDedupe, required: false, label: t('label.dedupe') },
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
