/**
 * The editor bundle's entry (resources/editor.js, window.RabbitmqRetry): the shared helpers, and
 * `register(type)`, which each node's .html calls through its resources/register/<type>.js.
 */
import { DIALOGS } from './nodes';

export * from './index';

const registered = new Set<string>();

/** Registers a node type's dialog with the editor, once. */
export function register(type: string): void {
  const dialog = DIALOGS[type];
  if (!dialog) throw new Error(`node-red-contrib-rabbitmq-retry: no dialog for node type '${type}'`);
  if (registered.has(type)) return;
  registered.add(type);
  dialog();
}
