/**
 * Who may edit and replay a parked message: Node-RED's settings.js says, off by default —
 *
 *     rabbitmqRetry: { editParked: true }              // every user with rabbitmq-retry.write
 *     rabbitmqRetry: { editParked: ['alice', 'bob'] }  // only these adminAuth users (who need the write permission too)
 *
 * Pure: the runtime settings and the request's user in, the answer out.
 */

export type EditPermission = { allowed: true } | { allowed: false; reason: string };

const HOW = "set rabbitmqRetry: { editParked: true } (or a list of user names) in Node-RED's settings.js";

/** Whether `user` (the adminAuth user name, undefined without adminAuth) may edit, by the settings' `rabbitmqRetry.editParked`. */
export function editPermission(settings: unknown, user: string | undefined): EditPermission {
  const section = settings && typeof settings === 'object' ? (settings as { rabbitmqRetry?: unknown }).rabbitmqRetry : undefined;
  const value = section && typeof section === 'object' ? (section as { editParked?: unknown }).editParked : undefined;
  if (value === undefined || value === false) return { allowed: false, reason: `editing parked messages is off: ${HOW}` };
  if (value === true) return { allowed: true };
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) {
    return { allowed: false, reason: 'rabbitmqRetry.editParked in settings.js must be true, false or a list of user names' };
  }
  if (user === undefined) return { allowed: false, reason: 'rabbitmqRetry.editParked names users, and nobody is logged in (Node-RED has no adminAuth)' };
  if (!value.includes(user)) return { allowed: false, reason: `user '${user}' is not one rabbitmqRetry.editParked names in settings.js` };
  return { allowed: true };
}
