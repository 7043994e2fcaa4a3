/**
 * The editor's side of the flow converter (issue 41): the action "Convert AMQP flows" (main menu and
 * action list) converts the selected nodes, or the current tab's, with the converter the command
 * runs (src/migrate), shows its report, and is undone with Ctrl+Z like any edit: one complete
 * 'replace' history event holding the flows as they were, as Node-RED's own merge of a remote change.
 */
import { convertFlows, reportText } from './convert';
import type { FlowNode } from './types';
import type { Translate } from '../editor/index';
import type { EditorNode, EditorRED } from '../editor/red';

interface EditorNodeState extends EditorNode {
  id: string;
  z?: string;
  changed?: boolean;
  moved?: boolean;
}

/** The parts of the editor's API the action uses, beyond the package's common ones. */
interface MigrateRED {
  nodes: {
    createCompleteNodeSet(opts?: { credentials?: boolean }): FlowNode[];
    clear(): void;
    import(flows: FlowNode[]): unknown;
    dirty(value?: boolean): boolean;
    version(value?: string): string;
    node(id: string): EditorNodeState | null;
  };
  view: { selection(): { nodes?: EditorNodeState[] }; redraw(full?: boolean): void };
  workspaces: { active(): string; refresh(): void; show(id: string, skipHistory?: boolean): void };
  history: { push(event: Record<string, unknown>): void };
  menu: { addItem(menu: string, item: Record<string, unknown>): void };
  palette: { refresh(): void };
  sidebar: { config: { refresh(): void } };
}

declare const RED: EditorRED & MigrateRED;

export const MIGRATE_ACTION = 'rabbitmq-retry:convert-amqp-flows';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The nodes to convert: the selection, else every node of the current tab. */
function scope(all: readonly FlowNode[]): Set<string> {
  const selected = RED.view.selection().nodes ?? [];
  if (selected.length > 0) return new Set(selected.map((n) => n.id));
  const tab = RED.workspaces.active();
  return new Set(all.filter((n) => n.z === tab).map((n) => n.id));
}

/** Converts, replaces the editor's flows with the result, and records the whole change as one undoable event. */
export function convertInEditor(t: Translate): void {
  const before = RED.nodes.createCompleteNodeSet();
  const result = convertFlows(before, { only: scope(before) });
  if (!result.report.some((e) => e.outcome === 'converted')) {
    RED.notify(t('migrate.nothing'), 'warning');
    return;
  }
  const event: Record<string, unknown> = { t: 'replace', config: before, changed: {}, moved: {}, complete: true, dirty: RED.nodes.dirty(), rev: RED.nodes.version() };
  for (const n of before) {
    const node = RED.nodes.node(n.id);
    if (node) {
      (event.changed as Record<string, unknown>)[n.id] = node.changed;
      (event.moved as Record<string, unknown>)[n.id] = node.moved;
    }
  }
  const tab = RED.workspaces.active();
  // The credentials the editor had stay with their nodes (the converted brokers' under their new names).
  const flows = result.flows.map((n) => (result.credentials[n.id] ? { ...n, credentials: result.credentials[n.id] } : n));
  RED.nodes.clear();
  RED.nodes.import(flows);
  for (const entry of result.report) {
    const node = entry.outcome === 'kept' ? null : RED.nodes.node(entry.id);
    if (node) node.changed = true;
  }
  RED.nodes.dirty(true);
  RED.history.push(event);
  RED.view.redraw(true);
  RED.palette.refresh();
  RED.workspaces.refresh();
  RED.workspaces.show(tab, true);
  RED.sidebar.config.refresh();
  showReport(t, reportText(result));
}

function showReport(t: Translate, report: string): void {
  const html = `<p>${escapeHtml(t('migrate.done'))}</p><pre class="rabbitmq-retry-migrate-report" style="max-height: 50vh; overflow: auto; white-space: pre-wrap; font-size: 11px;">${escapeHtml(report)}</pre>`;
  const options = { type: 'success' as const, fixed: true, buttons: [{ text: t('migrate.close'), click: (): void => note.close() }] };
  const note = RED.notify(html, options);
}

/** Adds the action and its main-menu entry (once, when the package's nodes register). */
export function migrateAction(t: Translate): void {
  RED.actions.add(MIGRATE_ACTION, () => convertInEditor(t));
  RED.menu.addItem('red-ui-header-button-sidemenu', { id: 'menu-item-rabbitmq-retry-migrate', label: t('migrate.menu'), onselect: MIGRATE_ACTION });
}
