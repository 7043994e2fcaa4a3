/** The retry-health dialog: a name; the node answers whatever arrives with the health report. */
import { str, type Translate } from '../../editor/index';
import type { NodeDefinition } from '../../editor/red';
import { CATEGORY, COLOR, italicWhenNamed } from '../../editor/common';

export function retryHealth(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: { name: { value: '' } },
    inputs: 1,
    outputs: 1,
    icon: 'rabbitmq-retry-health.svg',
    paletteLabel: () => t('paletteLabel'),
    inputLabels: () => t('inputLabel'),
    outputLabels: () => t('outputLabel'),
    label() {
      return str(this.name) || t('nodeLabel');
    },
    labelStyle: italicWhenNamed,
  };
}
