/**
 * The consumers' minute-by-minute history of the last 24 hours (see lib/observe/history.ts), as an
 * admin endpoint: GET <admin root>/rabbitmq-retry/history, behind Node-RED's admin authentication
 * (permission `rabbitmq-retry.read`). Query: `consumer` and / or `config` (node ids) to keep only
 * theirs, `minutes` (1 to 1440, default 60). The retry-console node answers the same (historyAnswer).
 */
import { HISTORY_MINUTES, type ConsumerHistory } from '../../lib/observe';
import { metrics } from './metrics';
import type { AdminRequest, AdminResponse, NodeAPI } from './node-red';

export const HISTORY_PATH = '/rabbitmq-retry/history';
export const DEFAULT_HISTORY_MINUTES = 60;

export interface HistoryQuery {
  consumer?: string;
  config?: string;
  minutes?: number;
}

export interface HistoryAnswer {
  /** Minutes in each series. */
  minutes: number;
  /** Series by consumer, with the names the flows give the consumer and its configuration. */
  consumers: Array<ConsumerHistory & { name: string; configName: string }>;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The minutes asked for, within 1..1440; the default when not a number. */
export function minutesOf(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  return Number.isFinite(n) ? Math.min(HISTORY_MINUTES, Math.max(1, Math.floor(n))) : DEFAULT_HISTORY_MINUTES;
}

/** A query's filter from a request's query or a msg's fields. */
export function historyQueryOf(source: Record<string, unknown> | undefined): HistoryQuery {
  const query: HistoryQuery = { minutes: minutesOf(source?.minutes) };
  const consumer = text(source?.consumer);
  const config = text(source?.config);
  if (consumer) query.consumer = consumer;
  if (config) query.config = config;
  return query;
}

export function historyAnswer(RED: NodeAPI, query: HistoryQuery): HistoryAnswer {
  const nameOf = (id: string): string => RED.nodes.getNode(id)?.name ?? '';
  const minutes = query.minutes ?? DEFAULT_HISTORY_MINUTES;
  const consumers = metrics.history.read({ ...query, minutes }).map((series) => ({ ...series, name: nameOf(series.consumer), configName: nameOf(series.config) }));
  return { minutes, consumers };
}

/** Registered once per process (Node-RED loads a node type's module once). */
export function registerHistoryEndpoint(RED: NodeAPI): void {
  RED.httpAdmin.get(HISTORY_PATH, RED.auth.needsPermission('rabbitmq-retry.read'), (req: AdminRequest, res: AdminResponse) => {
    res.json(historyAnswer(RED, historyQueryOf(req.query)));
  });
}
