/**
 * The exchanges the old flow declared and the converted one expects: a retry-config in check mode and
 * a retry-publish never declare one, so on a broker where the old flow never ran (or, for a non-durable
 * one, after a restart) they must be created first. Each is reported with the one command that creates
 * it: a PUT to the broker's management API, the same on RabbitMQ 3.x and 4.x. Pure.
 */
import { text } from './core';
import type { DeclaredExchange, ExchangeToCreate, FlowNode } from './types';

/** One entry per broker and exchange, placed by the converted broker's host and vhost. */
export function exchangesToCreate(declared: readonly DeclaredExchange[], brokerOf: (id: string) => FlowNode | undefined): ExchangeToCreate[] {
  const byKey = new Map<string, ExchangeToCreate>();
  for (const d of declared) {
    const key = JSON.stringify([d.broker, d.name]);
    const found = byKey.get(key);
    if (found) {
      if (!found.nodes.includes(d.by)) found.nodes.push(d.by);
      found.durable ||= d.durable;
      continue;
    }
    const broker = brokerOf(d.broker);
    byKey.set(key, { name: d.name, type: d.type, durable: d.durable, host: text(broker?.host), vhost: text(broker?.vhost) || '/', nodes: [d.by] });
  }
  return [...byKey.values()];
}

const segment = (part: string): string => encodeURIComponent(part).replace(/'/g, '%27');

/** The command that creates the exchange (durable, so a restart keeps it) through the management API. */
export function createCommand(e: ExchangeToCreate): string {
  const body = JSON.stringify({ type: e.type, durable: true });
  return `curl -u USER:PASSWORD -X PUT -H 'content-type: application/json' -d '${body}' 'http://${e.host || 'HOST'}:15672/api/exchanges/${segment(e.vhost)}/${segment(e.name)}'`;
}

/** The report's lines: each exchange, why it matters, and its command. */
export function exchangeLines(exchanges: readonly ExchangeToCreate[]): string[] {
  return exchanges.map((e) => `${'create'.padEnd(10)} exchange '${e.name}' (${e.type}${e.durable ? '' : ', was not durable'}) before deploying, check mode never does: ${createCommand(e)}`);
}
