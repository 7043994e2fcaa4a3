/** The retry-settle dialog: ack or retry, the reason a retry gives, and whether a retry splits a batch that failed as a whole. Pure: the editor bundle takes it (scripts/build-editor.mjs). */
import { fillSelect, str, validators, type Translate } from '../../editor/index';
import { CATEGORY, COLOR, italicWhenNamed } from '../../editor/common';
import type { JQStatic, NodeDefinition } from '../../editor/red';
import { SETTLE_ACTIONS } from './properties';

declare const $: JQStatic;

export function retrySettle(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: {
      name: { value: '' },
      action: { value: 'ack', label: t('label.action'), validate: validators.oneOf(SETTLE_ACTIONS) },
      reason: { value: '' },
      bisect: { value: false },
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
      fillSelect('#node-input-action', SETTLE_ACTIONS, (a) => t(`action.${a}`), this.action);
      $('#node-input-action')
        .on('change', () => $('.retry-settle-reason, .retry-settle-bisect').toggle($('#node-input-action').val() === 'retry'))
        .trigger('change');
    },
  };
}
