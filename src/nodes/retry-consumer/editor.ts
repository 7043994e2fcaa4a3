/**
 * The retry-consumer dialog: mode, prefetch, batch mode, timeouts, the events output, decoding,
 * deduplication, and downstream protection (kill switch, rate limit). Pure: the editor bundle takes it (scripts/build-editor.mjs).
 */
import { fail, fillSelect, showReasons, str, validators as v, type EditorNode, type Translate } from '../../editor/index';
import { migrate, numberProperty, numberValidator, withVersion } from '../shared/editor-properties';
import { CATEGORY, COLOR, italicWhenNamed } from '../../editor/common';
import type { EditorRED, JQStatic, NodeDefinition } from '../../editor/red';
import { NODE_TYPE } from '../shared/node-types';
import { CONSUMER_MODES, CONSUMER_NUMBERS, CONSUMER_VERSIONS, DECODE_MODES, DEDUPE_NO_KEY, DEDUPE_STORE_DOWN, INVALID_BODY_ACTIONS } from './properties';

declare const RED: EditorRED;
declare const $: JQStatic;
/** The editor's JSONata, when it has it: an expression is checked as the runtime will parse it. */
declare const jsonata: ((expression: string) => unknown) | undefined;


export function retryConsumer(t: Translate): NodeDefinition {
  return {
    category: CATEGORY,
    color: COLOR,
    defaults: consumerDefaults(t),
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
      prepareDialog(this, t);
    },
    oneditsave() {
      // The second output exists only while events are on: existing flows keep one output.
      this.outputs = $('#node-input-events').prop('checked') === true ? 2 : 1;
    },
  };
}

/** The dialog's properties: their defaults and checks (the runtime reads the same CONSUMER_NUMBERS). */
function consumerDefaults(t: Translate): NodeDefinition['defaults'] {
  return withVersion(CONSUMER_VERSIONS, {
    name: { value: '' },
    config: { value: '', type: NODE_TYPE.retryConfig, required: true, label: t('label.config') },
    prefetch: numberProperty(CONSUMER_NUMBERS.prefetch, t('label.prefetch')),
    batch: { value: false },
    batchSize: numberProperty(CONSUMER_NUMBERS.batchSize, t('label.batchSize')),
    batchWait: numberProperty(CONSUMER_NUMBERS.batchWait, t('label.batchWait')),
    settleTimeout: numberProperty(CONSUMER_NUMBERS.settleTimeout, t('label.settleTimeout')),
    decode: { value: 'auto', label: t('label.decode'), validate: v.oneOf(DECODE_MODES) },
    invalidBody: { value: 'park', label: t('label.invalidBody'), validate: v.oneOf(INVALID_BODY_ACTIONS) },
    mode: { value: 'retry', label: t('label.mode'), validate: v.oneOf(CONSUMER_MODES) },
    orderedPause: numberProperty(CONSUMER_NUMBERS.orderedPause, t('label.orderedPause')),
    parkingWatch: numberProperty(CONSUMER_NUMBERS.parkingWatch, t('label.parkingWatch')),
    events: { value: false },
    statsEvery: numberProperty(CONSUMER_NUMBERS.statsEvery, t('label.statsEvery')),
    dedupe: { value: '', type: NODE_TYPE.retryDedupe, required: false, label: t('label.dedupe') },
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
    dedupeNoKey: { value: 'process', label: t('label.dedupeNoKey'), validate: v.oneOf(DEDUPE_NO_KEY) },
    dedupeStoreDown: { value: 'pause', label: t('label.dedupeStoreDown'), validate: v.oneOf(DEDUPE_STORE_DOWN) },
    circuit: { value: false },
    circuitActivation: numberProperty(CONSUMER_NUMBERS.circuitActivation, t('label.circuitActivation')),
    circuitTripPercent: numberProperty(CONSUMER_NUMBERS.circuitTripPercent, t('label.circuitTripPercent')),
    circuitWindow: numberProperty(CONSUMER_NUMBERS.circuitWindow, t('label.circuitWindow')),
    circuitRestart: numberProperty(CONSUMER_NUMBERS.circuitRestart, t('label.circuitRestart')),
    circuitRestartMax: {
      ...numberProperty(CONSUMER_NUMBERS.circuitRestartMax, t('label.circuitRestartMax')),
      validate(this: EditorNode, value, opt) {
        const own = numberValidator(CONSUMER_NUMBERS.circuitRestartMax).call(this, value, opt);
        if (own !== true) return own;
        // Not below the first restart timeout (the runtime refuses it too: restartMaxProblem).
        const input = $('#node-input-circuitRestart');
        const restart = Number(str(input.length > 0 ? input.val() : this.circuitRestart).trim() || CONSUMER_NUMBERS.circuitRestart.fallback);
        return Number(str(value).trim() || CONSUMER_NUMBERS.circuitRestartMax.fallback) < restart ? fail(opt, t('errors.restartMax', { restart })) : true;
      },
    },
    circuitProbes: numberProperty(CONSUMER_NUMBERS.circuitProbes, t('label.circuitProbes')),
    rateLimit: numberProperty(CONSUMER_NUMBERS.rateLimit, t('label.rateLimit')),
    outputs: { value: 1 },
  });
}

/** Fills the dialog's selects and typed input, and shows only the sections its choices use. */
function prepareDialog(node: EditorNode, t: Translate): void {
  fillSelect('#node-input-mode', CONSUMER_MODES, (m) => t(`mode.${m}`), node.mode);
  fillSelect('#node-input-decode', DECODE_MODES, (m) => t(`decode.${m}`), node.decode);
  fillSelect('#node-input-invalidBody', INVALID_BODY_ACTIONS, (m) => t(`invalidBody.${m}`), node.invalidBody);
  fillSelect('#node-input-dedupeNoKey', DEDUPE_NO_KEY, (m) => t(`dedupeNoKey.${m}`), node.dedupeNoKey);
  fillSelect('#node-input-dedupeStoreDown', DEDUPE_STORE_DOWN, (m) => t(`dedupeStoreDown.${m}`), node.dedupeStoreDown);
  migrate(node, CONSUMER_VERSIONS, CONSUMER_NUMBERS, 'node-input');
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
    // Batch mode is refused with ordered mode (the runtime says why): its fields only in retry mode.
    $('.retry-consumer-batch').toggle(!ordered && $('#node-input-batch').prop('checked') === true);
  };
  $('#node-input-mode').on('change', refreshMode);
  $('#node-input-batch').on('change', refreshMode);
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
}
