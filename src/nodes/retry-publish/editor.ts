/** The retry-publish dialog. */
import { fillSelect, str, validators as v, type Translate } from '../../editor/index';
import type { JQStatic, NodeDefinition } from '../../editor/red';
import { CATEGORY, COLOR, italicWhenNamed } from '../../editor/common';
import { NODE_TYPE } from '../shared/node-types';
import { PUBLISH_MODES } from './properties';

declare const $: JQStatic;

export function retryPublish(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: {
      name: { value: '' },
      broker: { value: '', type: NODE_TYPE.retryBroker, required: true, label: t('label.broker') },
      mode: { value: 'publish', label: t('label.mode'), validate: v.oneOf(PUBLISH_MODES) },
      exchange: { value: '', label: t('label.exchange'), validate: v.shortString },
      routingKey: { value: '', label: t('label.routingKey'), validate: v.shortString },
      persistent: { value: true },
      declareQueue: { value: '', label: t('label.declareQueue'), validate: v.name() },
      contentType: { value: '', label: t('label.contentType'), validate: v.contentType },
      keepIds: { value: false },
      // Partitioned ordered mode (issue 42): a partitioned retry-config, and where a msg's key is.
      partitions: { value: '', type: NODE_TYPE.retryConfig, required: false, label: t('label.partitions') },
      key: { value: 'key', label: t('label.key'), validate: v.shortString },
      keyType: { value: 'msg' },
    },
    inputs: 1,
    outputs: 1,
    icon: 'rabbitmq-retry-publish.svg',
    align: 'right',
    paletteLabel: () => t('paletteLabel'),
    inputLabels: () => t('inputLabel'),
    outputLabels: () => t('outputLabel'),
    label() {
      if (this.name) return str(this.name);
      if (this.mode === 'reply') return t('nodeLabel.reply');
      return t('nodeLabel.publish', { exchange: str(this.exchange) || t('label.defaultExchange') });
    },
    labelStyle: italicWhenNamed,
    oneditprepare() {
      $('#node-input-key').typedInput({ default: 'msg', types: ['msg', 'jsonata'], typeField: '#node-input-keyType' });
      const partitioned = (): void => {
        const id = str($('#node-input-partitions').val());
        $('.retry-publish-partitioned').toggle(id !== '' && id !== '_ADD_');
        $('#node-input-exchange, #node-input-routingKey').prop('disabled', id !== '' && id !== '_ADD_');
      };
      $('#node-input-partitions').on('change', partitioned);
      partitioned();
      fillSelect('#node-input-mode', PUBLISH_MODES, (m) => t(`mode.${m}`), this.mode);
      $('#node-input-mode')
        .on('change', () => {
          const reply = $('#node-input-mode').val() === 'reply';
          $('.retry-publish-target').toggle(!reply);
          $('#retry-publish-reply-tip').toggle(reply);
        })
        .trigger('change');
    },
  };
}
