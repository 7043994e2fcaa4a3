/**
 * Why a field is red, where the user sees it. Node-RED shows a validator's message as a tooltip of the
 * field's input, but a typedInput (a field with an `env` type, or JSON) hides that input and shows its
 * own box instead: the message would never show. After each validation of the dialog (Node-RED checks
 * every field whenever one changes), a message Node-RED attached to a hidden input moves onto the box.
 */
import type { EditorNode, EditorRED, JQ, JQStatic, Tooltip } from './red';

declare const RED: EditorRED;
declare const $: JQStatic;

/** The tooltips this module put on typedInput boxes (Node-RED updates their text or deletes them). */
const onBoxes = new WeakSet<Tooltip>();

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** In oneditprepare, after the typedInputs are made: their fields' messages show on their boxes. */
export function showReasons(node: EditorNode, prefix: 'node-input' | 'node-config-input'): void {
  const defaults = RED.nodes.getType(str(node.type))?.defaults ?? {};
  const fields = Object.keys(defaults).filter((field) => defaults[field]?.validate);
  const move = (): void => {
    for (const field of fields) {
      const input = $(`#${prefix}-${field}`);
      const box: JQ = input.next('.red-ui-typedInput-container');
      const property = defaults[field];
      const shown = input.data('tooltip') as Tooltip | null | undefined;
      if (box.length === 0 || !property?.validate || !shown || onBoxes.has(shown)) continue;
      // The message Node-RED has just shown, asked again the way it asks (the property's label first).
      const message = property.validate.call(node, input.val(), property.label ? { label: property.label } : {});
      shown.delete();
      input.data('tooltip', null);
      if (typeof message !== 'string') continue;
      const tooltip = RED.popover.tooltip(box, () => message);
      onBoxes.add(tooltip);
      input.data('tooltip', tooltip);
    }
  };
  // Node-RED's own handlers sit on the inputs: an event reaches the form after they validated.
  const inputs = fields.map((field) => $(`#${prefix}-${field}`)).find((input) => input.length > 0);
  inputs?.closest('form').on('change keyup paste', move);
  // The dialog's first validation follows oneditprepare.
  setTimeout(move, 0);
}
