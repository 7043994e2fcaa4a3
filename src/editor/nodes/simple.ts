/** The dialogs of the settle end nodes: park-publisher and retry-settle. */
import { choices, fillSelect, str, validators, type Translate } from '../index';
import type { JQStatic, NodeDefinition } from '../red';
import { CATEGORY, COLOR, italicWhenNamed } from './common';

declare const $: JQStatic;

export function parkPublisher(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: { name: { value: '' }, reason: { value: '' } },
    inputs: 1,
    outputs: 1,
    icon: 'rabbitmq-retry-park.svg',
    paletteLabel: () => t('paletteLabel'),
    inputLabels: () => t('inputLabel'),
    outputLabels: () => t('outputLabel'),
    label() {
      return str(this.name) || t('nodeLabel.park');
    },
    labelStyle: italicWhenNamed,
  };
}

export function retrySettle(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: {
      name: { value: '' },
      action: { value: 'ack', label: t('label.action'), validate: validators.oneOf(choices.settleActions) },
      reason: { value: '' },
    },
    inputs: 1,
    outputs: 0,
    align: 'right',
    icon() {
      return this.action === 'retry' ? 'rabbitmq-retry-retry.svg' : 'rabbitmq-retry-ack.svg';
    },
    paletteLabel: () => t('paletteLabel'),
    inputLabels: () => t('inputLabel'),
    label() {
      return str(this.name) || t(this.action === 'retry' ? 'nodeLabel.retry' : 'nodeLabel.ack');
    },
    labelStyle: italicWhenNamed,
    oneditprepare() {
      fillSelect('#node-input-action', choices.settleActions, (a) => t(`action.${a}`), this.action);
      $('#node-input-action')
        .on('change', () => $('.retry-settle-reason').toggle($('#node-input-action').val() === 'retry'))
        .trigger('change');
    },
  };
}
