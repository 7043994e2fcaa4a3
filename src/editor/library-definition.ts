/**
 * What the Flow Library (flows.nodered.org) and its scorecard (`node-red-dev validate`) read of a
 * node type: they do not run the editor, they parse the node's .html for a
 * `….registerType('<type>', {…})` call with an object literal (category, color, defaults, credentials,
 * inputs, outputs, icon as plain values). The build (scripts/build-editor.mjs) takes that part of each
 * dialog (src/nodes/<type>/editor.ts) here, in English, and writes it into the built .html as the second argument
 * of `RabbitmqRetry.registerType`, which registers the dialog itself (src/editor.ts). Not in the bundle.
 */
import type { Translate } from './index';
import type { EditorNode, NodeDefinition } from './red';

/** A node type's definition as plain values: its functions called for a new node, in English. */
export interface LibraryDefinition {
  category: string;
  color?: string;
  defaults: Record<string, { value: unknown; type?: string; required?: boolean }>;
  credentials?: Record<string, { type: string }>;
  inputs?: number;
  outputs?: number;
  align?: 'left' | 'right';
  icon?: string;
  paletteLabel?: string;
  label?: string;
}

/**
 * A translator over one node type's catalog (its locales/<lang>/<type>.json), as the editor's
 * `RED._` reads it: `t('label.name')` is the catalog's `<type>.label.name`, `__name__` its arguments.
 */
export function catalogTranslator(type: string, catalog: unknown): Translate {
  return (key, args = {}) => {
    let text: unknown = catalog;
    for (const part of [type, ...key.split('.')]) text = typeof text === 'object' && text !== null ? (text as Record<string, unknown>)[part] : undefined;
    if (typeof text !== 'string') throw new Error(`${type}: no text '${key}' in the catalog`);
    return text.replace(/__(\w+)__/g, (whole, name: string) => (name in args ? String(args[name]) : whole));
  };
}

/** The definition's plain part; its icon, palette label and label as a new node (its default values) shows them. */
export function libraryDefinition(definition: NodeDefinition): LibraryDefinition {
  const defaults: LibraryDefinition['defaults'] = {};
  const node: EditorNode = {};
  for (const [name, property] of Object.entries(definition.defaults)) {
    defaults[name] = {
      value: property.value,
      ...(property.type === undefined ? {} : { type: property.type }),
      ...(property.required === undefined ? {} : { required: property.required }),
    };
    node[name] = property.value;
  }
  const icon = typeof definition.icon === 'function' ? definition.icon.call(node) : definition.icon;
  const out: LibraryDefinition = { category: definition.category, ...(definition.color === undefined ? {} : { color: definition.color }), defaults };
  if (definition.credentials) out.credentials = definition.credentials;
  if (definition.inputs !== undefined) out.inputs = definition.inputs;
  if (definition.outputs !== undefined) out.outputs = definition.outputs;
  if (definition.align !== undefined) out.align = definition.align;
  if (icon !== undefined) out.icon = icon;
  if (definition.paletteLabel) out.paletteLabel = definition.paletteLabel();
  if (definition.label) out.label = definition.label.call(node);
  return out;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * A value as a JavaScript literal the Flow Library's parser reads: object keys as identifiers (it
 * reads `key.name`), everything else as JSON, with `<` escaped so no text can close the <script>.
 */
export function literal(value: unknown, indent = ''): string {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const inner = `${indent}    `;
    const entries = Object.entries(value).map(([key, v]) => `${IDENTIFIER.test(key) ? key : JSON.stringify(key)}: ${literal(v, inner)}`);
    if (entries.length === 0) return '{}';
    // An object of plain values on one line (`name: { value: "" }`), others a property a line.
    return entries.some((entry) => entry.includes('\n') || entry.endsWith('}'))
      ? `{\n${entries.map((entry) => inner + entry).join(',\n')}\n${indent}}`
      : `{ ${entries.join(', ')} }`;
  }
  const json = JSON.stringify(value) as string | undefined;
  if (json === undefined) throw new Error(`not a plain value: ${String(value)}`);
  return json.replace(/</g, '\\u003c');
}

/** The inline script of a node's built .html: registers the type's dialog, the definition for the Flow Library. */
export function registrationScript(type: string, definition: LibraryDefinition): string {
  return `RabbitmqRetry.registerType(${JSON.stringify(type)}, ${literal(definition)});`;
}
