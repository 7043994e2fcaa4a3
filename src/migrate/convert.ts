/**
 * Converts the flows of the other Node-RED AMQP packages to this package's nodes: flows JSON in,
 * converted flows, a report of every node and the credentials of the converted nodes out. Pure (no
 * Node.js API): the command (cli.ts) and the editor's action both run it.
 */
import { abreits } from './abreits';
import { amqpAck } from './amqp-ack';
import { Conversion, nameOf } from './core';
import { exchangeLines, exchangesToCreate } from './exchanges';
import { frankvdb } from './frankvdb';
import type { Mapper } from './mapper';
import { meowwolf } from './meowwolf';
import { oldApiNotes } from './old-api';
import type { ConvertOptions, ConvertResult, FlowNode } from './types';

/** Each family of packages that share node types, the most specific package first. */
const FAMILIES: readonly (readonly Mapper[])[] = [
  [frankvdb, meowwolf],
  [amqpAck, abreits],
];

/** The mapper of each old node type in these flows. */
export function mappersFor(nodes: readonly FlowNode[]): Map<string, Mapper> {
  const byType = new Map<string, Mapper>();
  for (const family of FAMILIES) {
    const mapper = family.find((m) => m.matches(nodes)) ?? family[family.length - 1];
    for (const type of mapper?.types ?? []) if (mapper) byType.set(type, mapper);
  }
  return byType;
}

/** Config nodes are converted after the nodes that use them (mappers read them as the input had them). */
const CONFIG_TYPES = new Set(['amqp-broker', 'amqp-server']);

/** The ids to convert: the nodes in scope (all by default) and the broker nodes they use. */
function inScope(nodes: readonly FlowNode[], only: ReadonlySet<string> | undefined, mappers: Map<string, Mapper>): Set<string> {
  if (!only) return new Set(nodes.map((n) => n.id));
  const ids = new Set([...only]);
  for (const n of nodes) {
    if (!only.has(n.id) || !mappers.has(n.type)) continue;
    for (const ref of [n.broker, n.server]) if (typeof ref === 'string' && ref !== '') ids.add(ref);
  }
  return ids;
}

export function convertFlows(flows: readonly FlowNode[], options: ConvertOptions = {}): ConvertResult {
  if (!Array.isArray(flows)) throw new Error('not a flows file: a JSON array of nodes is expected');
  const nodes = (flows as readonly unknown[]).filter((n): n is FlowNode => typeof n === 'object' && n !== null && typeof (n as FlowNode).id === 'string' && typeof (n as FlowNode).type === 'string');
  const mappers = mappersFor(nodes);
  const scope = inScope(nodes, options.only, mappers);
  const ctx = new Conversion(nodes, options.credentials, options.autoAck, options.credentialsLeftOut);
  const ordered = [...nodes.filter((n) => !CONFIG_TYPES.has(n.type)), ...nodes.filter((n) => CONFIG_TYPES.has(n.type))];
  for (const node of ordered) {
    const mapper = mappers.get(node.type);
    if (!scope.has(node.id)) continue;
    if (mapper) mapper.convert(ctx, node);
    else if (node.type !== 'tab') ctx.entry(node, '', 'kept', [], oldApiNotes(node).length > 0 ? oldApiNotes(node) : ['not a node of another AMQP package: unchanged']);
  }
  if (options.only) sharedBrokers(ctx, nodes, scope, mappers);
  // Credentials never travel in the flows: the converted nodes' and the unchanged nodes' (from the
  // credentials file, or carried by an export) go into the credentials of the result.
  const credentials = { ...ctx.credentials };
  const out = ctx.nodes().map((n) => {
    const unchanged = ctx.original(n.id)?.type === n.type;
    const given = options.credentials?.[n.id];
    if (unchanged && given && !(n.id in credentials)) credentials[n.id] = given;
    if (!('credentials' in n)) return n;
    const { credentials: carried, ...rest } = n;
    if (unchanged && !(n.id in credentials) && typeof carried === 'object' && carried !== null) credentials[n.id] = carried as Record<string, string>;
    return rest;
  });
  return { flows: out, report: ctx.orderedReport(), credentials, exchanges: exchangesToCreate(ctx.exchanges, (id) => ctx.node(id)) };
}

/** A converted broker that old nodes outside the scope still use: its report says so, and what to do. */
function sharedBrokers(ctx: Conversion, nodes: readonly FlowNode[], scope: ReadonlySet<string>, mappers: Map<string, Mapper>): void {
  for (const entry of ctx.report) {
    if (entry.outcome !== 'converted' || !CONFIG_TYPES.has(entry.type)) continue;
    const users = nodes.filter((n) => !scope.has(n.id) && mappers.has(n.type) && (n.broker === entry.id || n.server === entry.id));
    if (users.length === 0) continue;
    const names = users.slice(0, 3).map((n) => `'${nameOf(n) || n.type}'`).join(', ') + (users.length > 3 ? ', …' : '');
    entry.notes.push(`${users.length} old node(s) not converted still use it (${names}) and lose their broker: convert them too before deploying (their tab, or select them)`);
  }
}

/** A node's name in the report, cut short (an added comment's name is its whole title). */
const short = (name: string): string => (name.length > 40 ? `${name.slice(0, 39)}…` : name);

/** The report as lines for a person: one per node, never a credential. */
export function reportText(result: Pick<ConvertResult, 'report' | 'exchanges'>): string {
  const lines = result.report.map((e) => {
    const what = e.outcome === 'converted' ? `converted to ${e.into.join(' + ')}` : e.outcome === 'added' ? 'added' : 'kept';
    const label = `${e.type} '${short(e.name || e.id)}'${e.package && e.outcome !== 'added' ? ` (${e.package})` : ''}`;
    return `${what.padEnd(10)} ${label}${e.notes.length > 0 ? `: ${e.notes.join('; ')}` : ''}`;
  });
  lines.push(...exchangeLines(result.exchanges));
  const count = (o: string): number => result.report.filter((e) => e.outcome === o).length;
  const create = result.exchanges.length > 0 ? `, ${result.exchanges.length} exchange(s) to create` : '';
  lines.push(`${count('converted')} converted, ${count('added')} added, ${count('kept')} kept${create}`);
  return lines.join('\n');
}

