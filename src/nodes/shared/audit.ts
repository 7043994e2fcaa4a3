/**
 * Node-RED's audit log for what the people on call do to parked messages: every replay, redirect,
 * edit and purge is one `rabbitmq-retry.<action>` event. From the admin API the request goes along,
 * so Node-RED adds the user (under adminAuth), the path and the address; from a flow (the park-replay
 * node) there is no request and `by` says `flow <node id>`.
 */
import type { AdminRequest, NodeAPI } from './node-red';

/** What Node-RED's `RED.log.audit` takes: the event, and the admin request it came with (if any). */
export interface AuditLog {
  audit?(event: Record<string, unknown>, req?: unknown): void;
}

/** The details of one audited action: the config's id, the queue, how many, the filter, and anything else worth keeping. */
export interface AuditDetails {
  config?: string;
  queue?: string;
  count?: number;
  filter?: unknown;
  /** Who did it when there is no request: e.g. `flow <node id>`. */
  by?: string;
  [key: string]: unknown;
}

/** The audit event's name: `rabbitmq-retry.<action>` (replay, redirect, edit, purge, paced-replay, …). */
export function auditEventName(action: string): string {
  return `rabbitmq-retry.${action}`;
}

/** Who acted, as the replayed copy's `replayed-by` header says it: the admin user's name, else `details.by`, else `admin API`. */
export function actorOf(req: AdminRequest | undefined, by?: string): string {
  const user = (req as { user?: { username?: unknown } } | undefined)?.user;
  if (user && typeof user.username === 'string' && user.username !== '') return user.username;
  return by ?? (req ? 'admin API' : 'flow');
}

/**
 * What Node-RED's audit log reads of an admin request — the user, the path, the client's address — as
 * plain data: an event written after the request was answered (a paced replay's end) passes this
 * instead of the request, and carries the same `user`, `path` and `ip` as the event of its start.
 */
export function requestOrigin(req: AdminRequest): AdminRequest {
  const express = req as AdminRequest & { headers?: Record<string, unknown>; socket?: { remoteAddress?: string } };
  const forwarded = express.headers?.['x-forwarded-for'];
  const ip = req.ip ?? (typeof forwarded === 'string' ? forwarded : express.socket?.remoteAddress);
  return { body: undefined, params: {}, user: req.user, path: req.path, ip };
}

/**
 * Writes one audit event. `RED.log.audit` is missing only in a test double; a failing audit log never
 * fails the action it records (the action already happened).
 */
export function audit(RED: Pick<NodeAPI, 'log'>, action: string, details: AuditDetails, req?: AdminRequest): void {
  const log = RED.log as AuditLog;
  if (typeof log.audit !== 'function') return;
  const event: Record<string, unknown> = { event: auditEventName(action), ...details };
  if (!req && event.by === undefined) event.by = 'flow';
  try {
    log.audit(event, req);
  } catch {
    // The audit log is Node-RED's; an error there must not undo or hide the action.
  }
}
