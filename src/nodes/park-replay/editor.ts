/** The park-replay dialog; the parking browser, the editor's sidebar tab on parking queues (editor-parking-browser.ts), comes with the type (EXTRAS in src/editor.ts). */
import { fillSelect, rule, str, validators as v, type Translate } from '../../editor/index';
import { migrate, numberProperty, withVersion } from '../shared/editor-properties';
import { reasonFilterProblem } from '../../lib/rules/property-rules';
import type { EditorRED, JQStatic, NodeDefinition } from '../../editor/red';
import { CATEGORY, COLOR, italicWhenNamed } from '../../editor/common';
import { NODE_TYPE } from '../shared/node-types';
import { PARK_NODE_ACTIONS, REPLAY_NUMBERS, REPLAY_VERSIONS } from './properties';

declare const RED: EditorRED;
declare const $: JQStatic;

export function parkReplay(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: withVersion(REPLAY_VERSIONS, {
      name: { value: '' },
      config: { value: '', type: NODE_TYPE.retryConfig, required: true, label: t('label.config') },
      max: numberProperty(REPLAY_NUMBERS.max, t('label.max')),
      resetAttempts: { value: true },
      action: { value: 'replay', label: t('label.action'), validate: v.oneOf(PARK_NODE_ACTIONS) },
      // Which parked messages a replay or purge takes: text (any case) or /regular expression/; empty: all.
      reason: { value: '', label: t('label.reason'), validate: rule(reasonFilterProblem) },
    }),
    inputs: 1,
    outputs: 1,
    icon: 'rabbitmq-retry-replay.svg',
    paletteLabel: () => t('paletteLabel'),
    inputLabels: () => t('inputLabel'),
    outputLabels: () => t('outputLabel'),
    label() {
      if (this.name) return str(this.name);
      const config = this.config ? RED.nodes.node(str(this.config)) : null;
      const action = str(this.action) || 'replay';
      return config?.mainQueue ? t(`label.${action}Of`, { queue: str(config.mainQueue) }) : t('paletteLabel');
    },
    labelStyle: italicWhenNamed,
    oneditprepare() {
      fillSelect('#node-input-action', PARK_NODE_ACTIONS, (a) => t(`action.${a}`), this.action);
      migrate(this, REPLAY_VERSIONS, REPLAY_NUMBERS, 'node-input');
      const toggle = (): void => {
        const action = $('#node-input-action').val();
        $('.park-replay-only').toggle(action === 'replay' || action === 'topic');
        $('.park-select-only').toggle(action === 'replay' || action === 'purge' || action === 'topic');
      };
      $('#node-input-action').on('change', toggle);
      toggle();
    },
  };
}
