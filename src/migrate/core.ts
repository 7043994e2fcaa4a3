/**
 * The converter's shared core: the flow being converted (nodes by id, in order), replacing a node in
 * place (same id: wires into it stay), adding nodes next to one, moving the wires that led into a
 * node, comments for what stays as it was, and the report. Pure: runs in Node.js and in the editor.
 */
import { comment } from './templates';
import type { DeclaredExchange, FlowCredentials, FlowNode, ReportEntry } from './types';

export const THIS_PACKAGE = 'node-red-contrib-rabbitmq-retry';

export class Conversion {
  private readonly order: string[];
  private readonly byId: Map<string, FlowNode>;
  private readonly input: Map<string, FlowNode>;
  readonly report: ReportEntry[] = [];
  readonly credentials: FlowCredentials = {};
  /** Exchanges the converted nodes' old selves declared (the new ones never do). */
  readonly exchanges: DeclaredExchange[] = [];

  constructor(
    flows: readonly FlowNode[],
    private readonly oldCredentials: FlowCredentials = {},
    /** What a consumer that acked on arrival becomes (ConvertOptions.autoAck). */
    readonly autoAck: 'ack-on-arrival' | 'settle-at-end' = 'ack-on-arrival',
    /** ConvertOptions.credentialsLeftOut. */
    readonly credentialsLeftOut = false,
  ) {
    this.order = flows.map((n) => n.id);
    this.byId = new Map(flows.map((n) => [n.id, structuredClone(n)]));
    this.input = new Map(flows.map((n) => [n.id, n]));
  }

  /** A node as the input had it (before any conversion). */
  original(id: string): FlowNode | undefined {
    return this.input.get(id);
  }

  node(id: string): FlowNode | undefined {
    return this.byId.get(id);
  }

  nodes(): FlowNode[] {
    return this.order.map((id) => this.byId.get(id)).filter((n): n is FlowNode => n !== undefined);
  }

  /** Credentials the input had for a node: flows_cred.json's, or the ones an export carried on the node. */
  credentialsOf(node: FlowNode): Record<string, string> {
    const onNode = typeof node.credentials === 'object' && node.credentials !== null ? (node.credentials as Record<string, string>) : {};
    return { ...(this.oldCredentials[node.id] ?? {}), ...onNode };
  }

  /** Puts `replacement` where `id` was (same id: the wires that lead into it stay valid). */
  replace(id: string, replacement: FlowNode): void {
    this.byId.set(id, { ...replacement, id });
  }

  /** Adds a node right after `after` in the file's order. */
  add(node: FlowNode, after: string): FlowNode {
    if (this.byId.has(node.id)) throw new Error(`node id ${node.id} is taken`);
    const at = this.order.indexOf(after);
    this.order.splice(at < 0 ? this.order.length : at + 1, 0, node.id);
    this.byId.set(node.id, node);
    return node;
  }

  /** Every wire (and link-in target) that led into `from` leads into `to` instead. */
  moveInputs(from: string, to: string[]): void {
    for (const node of this.byId.values()) {
      if (!Array.isArray(node.wires)) continue;
      node.wires = node.wires.map((port) => port.flatMap((target) => (target === from ? to : [target])));
    }
  }

  /** An id for a node added for `base`, not taken yet. */
  idFor(base: string, suffix: string): string {
    let id = `${base}-${suffix}`;
    for (let i = 2; this.byId.has(id); i++) id = `${base}-${suffix}${i}`;
    return id;
  }

  /** Where a node added for `node` goes: below it, `row` rows down, `column` columns right. */
  near(node: FlowNode, suffix: string, name: string, row: number, column = 0): Pick<FlowNode, 'id' | 'z' | 'x' | 'y' | 'name'> {
    const place: Pick<FlowNode, 'id' | 'z' | 'x' | 'y' | 'name'> = { id: this.idFor(node.id, suffix), name };
    if (node.z !== undefined) place.z = node.z;
    if (typeof node.x === 'number') place.x = node.x + column * 180;
    if (typeof node.y === 'number') place.y = node.y + row * 45;
    return place;
  }

  /** Keeps a node as it was, with a comment next to it saying what and why; reported as kept. */
  keep(node: FlowNode, pkg: string, why: string): void {
    const title = `Not converted: ${why}`.slice(0, 120);
    const info = `${node.type} '${nameOf(node)}' was kept as it was: ${why}. See docs/migration.md of ${THIS_PACKAGE}.`;
    const note = this.add(comment(this.near(node, 'note', title, -1), title, info), node.id);
    this.entry(node, pkg, 'kept', [], [why]);
    this.added(note, `says why '${nameOf(node) || node.type}' was not converted: delete it once the node is replaced`, node.id);
  }

  entry(node: FlowNode, pkg: string, outcome: ReportEntry['outcome'], into: string[], notes: string[]): void {
    this.report.push({ id: node.id, type: node.type, name: nameOf(node), package: pkg, outcome, into, notes });
  }

  /** Reports a node added for another one (`for`: the input node's id). */
  added(node: FlowNode, note: string, forId: string): void {
    this.report.push({ id: node.id, type: node.type, name: nameOf(node), package: THIS_PACKAGE, outcome: 'added', into: [node.type], notes: [note], for: forId });
  }

  /** The report in the input's order, each node followed by the nodes added for it. */
  orderedReport(): ReportEntry[] {
    const rank = new Map([...this.input.keys()].map((id, i) => [id, i]));
    const key = (e: ReportEntry): number => rank.get(e.for ?? e.id) ?? rank.size;
    return this.report.map((e, i) => ({ e, i })).sort((a, b) => key(a.e) - key(b.e) || Number(a.e.outcome === 'added') - Number(b.e.outcome === 'added') || a.i - b.i).map(({ e }) => e);
  }
}

export function nameOf(node: FlowNode): string {
  return typeof node.name === 'string' ? node.name : '';
}

export const text = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : fallback);

export const bool = (value: unknown): boolean => value === true || value === 'true';

export function num(value: unknown, fallback: number): number {
  const n = typeof value === 'number' ? value : Number(text(value).trim() || NaN);
  return Number.isFinite(n) ? n : fallback;
}

/** A JSON object field (the old packages save JSON as text), or undefined when it is not one. */
export function jsonObject(value: unknown): Record<string, unknown> | undefined {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text(value));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
