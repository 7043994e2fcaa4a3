/** The retry-console dialog: a retry config, how often it sends by itself, how many minutes of history. */
import { str, type Translate } from '../../editor/index';
import { numberProperty } from '../shared/editor-properties';
import type { EditorRED, NodeDefinition } from '../../editor/red';
import { CATEGORY, COLOR, italicWhenNamed } from '../../editor/common';
import { NODE_TYPE } from '../shared/node-types';
import { CONSOLE_NUMBERS } from './properties';

declare const RED: EditorRED;

export function retryConsole(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: {
      name: { value: '' },
      config: { value: '', type: NODE_TYPE.retryConfig, required: true, label: t('label.config') },
      every: numberProperty(CONSOLE_NUMBERS.every, t('label.every')),
      minutes: numberProperty(CONSOLE_NUMBERS.minutes, t('label.minutes')),
      // The history's series it sends, comma-separated (acked, retried, parked, replayed, duplicates, depth); empty: all.
      series: { value: '' },
    },
    inputs: 1,
    outputs: 5,
    icon: 'rabbitmq-retry-console.svg',
    paletteLabel: () => t('paletteLabel'),
    inputLabels: () => t('inputLabel'),
    outputLabels: (i: number) => t(`output.${i + 1}`),
    label() {
      if (this.name) return str(this.name);
      const config = this.config ? RED.nodes.node(str(this.config)) : null;
      return config?.mainQueue ? `${t('nodeLabel')}: ${str(config.mainQueue)}` : t('paletteLabel');
    },
    labelStyle: italicWhenNamed,
  };
}
