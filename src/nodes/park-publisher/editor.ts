/** The park-publisher dialog: a name and the reason a park gives. Pure: the editor bundle takes it (scripts/build-editor.mjs). */
import { str, type Translate } from '../../editor/index';
import { CATEGORY, COLOR, italicWhenNamed } from '../../editor/common';
import type { NodeDefinition } from '../../editor/red';

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
