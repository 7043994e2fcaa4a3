/**
 * The editor bundle's entry (resources/editor.js, window.RabbitmqRetry): the shared helpers, and
 * `registerType(type, definition)`, which each node's .html calls in the inline script the build
 * wrote into it (scripts/build-editor.mjs).
 */
import { i18n } from './index';
import { DIALOGS, EXTRAS } from './nodes';
import type { EditorRED } from './red';

export * from './index';

declare const RED: EditorRED;

const registered = new Set<string>();

/**
 * Registers a node type's dialog with the editor, once. The .html passes a second argument, the
 * static part of this same dialog (src/editor/library-definition.ts) written out as a literal for
 * the Flow Library, whose parser reads `….registerType('<type>', {…})` calls: the editor needs
 * nothing of it and gets the dialog itself.
 */
export function registerType(type: string): void {
  const dialog = DIALOGS[type];
  if (!dialog) throw new Error(`node-red-contrib-rabbitmq-retry: no dialog for node type '${type}'`);
  if (registered.has(type)) return;
  registered.add(type);
  const t = i18n(type);
  RED.nodes.registerType(type, dialog(t));
  EXTRAS[type]?.(t);
}
