/** The retry-consumer dialog: mode, prefetch, timeouts, the events output, decoding, deduplication, and downstream protection (kill switch, rate limit). */
import { choices, fail, fillSelect, i18n, migrate, numberProperty, showReasons, str, validators as v, withVersion, type EditorNode } from '../index';
import type { EditorRED, JQStatic } from '../red';
import { NUMBER_FIELDS } from '../../nodes/shared/properties';
import { CATEGORY, COLOR, italicWhenNamed } from './common';

declare const RED: EditorRED;
declare const $: JQStatic;
/** The editor's JSONata, when it has it: an expression is checked as the runtime will parse it. */
declare const jsonata: ((expression: string) => unknown) | undefined;

export function retryConsumer(): void {
  const t = i18n('retry-consumer');
  RED.nodes.registerType('retry-consumer', {
    category: CATEGORY,
    color: COLOR,
    defaults: withVersion('retry-consumer', {
      name: { value: '' },
      config: { value: '', type: 'retry-config', required: true, label: t('label.config') },
      prefetch: numberProperty('retry-consumer', 'prefetch', t('label.prefetch')),
      settleTimeout: numberProperty('retry-consumer', 'settleTimeout', t('label.settleTimeout')),
      decode: { value: 'auto', label: t('label.decode'), validate: v.oneOf(choices.decodeModes) },
      invalidBody: { value: 'park', label: t('label.invalidBody'), validate: v.oneOf(choices.invalidBodyActions) },
      mode: { value: 'retry', label: t('label.mode'), validate: v.oneOf(choices.consumerModes) },
      orderedPause: numberProperty('retry-consumer', 'orderedPause', t('label.orderedPause')),
      parkingWatch: numberProperty('retry-consumer', 'parkingWatch', t('label.parkingWatch')),
      events: { value: false },
      statsEvery: numberProperty('retry-consumer', 'statsEvery', t('label.statsEvery')),
      dedupe: { value: '', type: 'retry-dedupe', required: false, label: t('label.dedupe') },
      dedupeKey: {
        value: '',
        label: t('label.dedupeKey'),
        validate(this: EditorNode, value, opt) {
          const input = $('#node-input-dedupeKeyType');
          const type = input.length > 0 ? input.val() : this.dedupeKeyType;
          if (type === 'msg' && str(value) === '') return fail(opt, t('errors.dedupeKey'));
          if (type === 'jsonata' && typeof jsonata === 'function') {
            try {
              jsonata(str(value));
            } catch (err) {
              return fail(opt, t('errors.dedupeExpression', { message: (err as Error).message }));
            }
          }
          return true;
        },
      },
      dedupeKeyType: { value: 'messageId' },
      dedupeNoKey: { value: 'process', label: t('label.dedupeNoKey'), validate: v.oneOf(choices.dedupeNoKey) },
      dedupeStoreDown: { value: 'pause', label: t('label.dedupeStoreDown'), validate: v.oneOf(choices.dedupeStoreDown) },
      circuit: { value: false },
      circuitActivation: numberProperty('retry-consumer', 'circuitActivation', t('label.circuitActivation')),
      circuitTripPercent: numberProperty('retry-consumer', 'circuitTripPercent', t('label.circuitTripPercent')),
      circuitWindow: numberProperty('retry-consumer', 'circuitWindow', t('label.circuitWindow')),
      circuitRestart: numberProperty('retry-consumer', 'circuitRestart', t('label.circuitRestart')),
      circuitRestartMax: {
        ...numberProperty('retry-consumer', 'circuitRestartMax', t('label.circuitRestartMax')),
        validate(this: EditorNode, value, opt) {
          const own = v.number('retry-consumer', 'circuitRestartMax').call(this, value, opt);
          if (own !== true) return own;
          // Not below the first restart timeout (the runtime refuses it too: restartMaxProblem).
          const input = $('#node-input-circuitRestart');
          const restart = Number(str(input.length > 0 ? input.val() : this.circuitRestart).trim() || NUMBER_FIELDS['retry-consumer'].circuitRestart.fallback);
          return Number(str(value).trim() || NUMBER_FIELDS['retry-consumer'].circuitRestartMax.fallback) < restart ? fail(opt, t('errors.restartMax', { restart })) : true;
        },
      },
      circuitProbes: numberProperty('retry-consumer', 'circuitProbes', t('label.circuitProbes')),
      rateLimit: numberProperty('retry-consumer', 'rateLimit', t('label.rateLimit')),
      outputs: { value: 1 },
    }),
    inputs: 1,
    outputs: 1,
    icon: 'rabbitmq-retry-consumer.svg',
    paletteLabel: () => t('paletteLabel'),
    inputLabels: () => t('inputLabel'),
    outputLabels: (i) => (i === 0 ? t('outputLabel') : t('eventsLabel')),
    label() {
      if (this.name) return str(this.name);
      const config = this.config ? RED.nodes.node(str(this.config)) : null;
      return config?.mainQueue ? t('label.consume', { queue: str(config.mainQueue) }) : t('paletteLabel');
    },
    labelStyle: italicWhenNamed,
    oneditprepare() {
      const node = this;
      fillSelect('#node-input-mode', choices.consumerModes, (m) => t(`mode.${m}`), node.mode);
      fillSelect('#node-input-decode', choices.decodeModes, (m) => t(`decode.${m}`), node.decode);
      fillSelect('#node-input-invalidBody', choices.invalidBodyActions, (m) => t(`invalidBody.${m}`), node.invalidBody);
      fillSelect('#node-input-dedupeNoKey', choices.dedupeNoKey, (m) => t(`dedupeNoKey.${m}`), node.dedupeNoKey);
      fillSelect('#node-input-dedupeStoreDown', choices.dedupeStoreDown, (m) => t(`dedupeStoreDown.${m}`), node.dedupeStoreDown);
      migrate(node, 'retry-consumer', 'node-input');
      // The key: the messageId (nothing to type), a msg property, or a JSONata expression on the msg the flow would get.
      $('#node-input-dedupeKey').typedInput({
        default: 'messageId',
        typeField: '#node-input-dedupeKeyType',
        types: [{ value: 'messageId', label: t('dedupeKeyType.messageId'), hasValue: false }, 'msg', 'jsonata'],
      });
      const refreshDedupe = (): void => {
        const store = str($('#node-input-dedupe').val());
        $('.retry-consumer-dedupe').toggle(store !== '' && store !== '_ADD_');
      };
      $('#node-input-dedupe').on('change', refreshDedupe);
      refreshDedupe();
      const refreshMode = (): void => {
        const ordered = $('#node-input-mode').val() === 'ordered';
        $('.retry-consumer-ordered').toggle(ordered);
        $('.retry-consumer-parallel').toggle(!ordered);
      };
      $('#node-input-mode').on('change', refreshMode);
      refreshMode();
      const refreshCircuit = (): void => {
        $('.retry-consumer-circuit').toggle($('#node-input-circuit').prop('checked') === true);
      };
      $('#node-input-circuit').on('change', refreshCircuit);
      refreshCircuit();
      const refreshEvents = (): void => {
        $('.retry-consumer-events').toggle($('#node-input-events').prop('checked') === true);
      };
      $('#node-input-events').on('change', refreshEvents);
      refreshEvents();
      showReasons(node, 'node-input');
    },
    oneditsave() {
      // The second output exists only while events are on: existing flows keep one output.
      this.outputs = $('#node-input-events').prop('checked') === true ? 2 : 1;
    },
  });
}
