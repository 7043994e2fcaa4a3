/**
 * Node-RED's audit log for the package's admin actions: `RED.log.audit` records the event with the
 * user (under adminAuth), the path and the address of the request; settings.js's
 * `logging.console.audit: true` (or a logging handler) shows it.
 */
import type { AdminRequest, NodeAPI } from './node-red';

export function audit(RED: NodeAPI, event: string, details: Record<string, unknown>, req?: AdminRequest): void {
  RED.log.audit({ event, ...details }, req);
}
