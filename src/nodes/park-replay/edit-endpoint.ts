/**
 * The parking browser's edit and replay of one parked message (admin endpoints):
 *
 * - GET  <admin root>/rabbitmq-retry/parking/<config>/edit (rabbitmq-retry.read): whether the user
 *   may edit (settings.js's rabbitmqRetry.editParked, see edit-setting.ts) and which headers are locked;
 * - POST <admin root>/rabbitmq-retry/parking/<config>/edit (rabbitmq-retry.write and the setting):
 *   `{messageId, body, headers}` replays that message as the edited copy (parking-actions.ts
 *   editParked), and writes the edit to Node-RED's audit log with the user.
 */
import { randomUUID } from 'node:crypto';
import { EditRefused, LOCKED_HEADERS, readEdit } from '../../lib/parking';
import { audit } from '../shared/audit';
import type { AdminRequest, AdminResponse, NodeAPI } from '../shared/node-red';
import { editParked } from './queue-actions';
import { editPermission } from './edit-setting';
import { answer, PARKING_PATH, usableConfig } from './parking-endpoints';

/** The audit log's action: the event `rabbitmq-retry.edit`. */
const EDIT_ACTION = 'edit';

export function registerEditEndpoint(RED: NodeAPI): void {
  RED.httpAdmin.get(`${PARKING_PATH}/:config/edit`, RED.auth.needsPermission('rabbitmq-retry.read'), (req: AdminRequest, res: AdminResponse) => {
    res.status(200).json({ ...editPermission(RED.settings, req.user?.username), locked: LOCKED_HEADERS });
  });
  RED.httpAdmin.post(`${PARKING_PATH}/:config/edit`, RED.auth.needsPermission('rabbitmq-retry.write'), (req: AdminRequest, res: AdminResponse) => {
    answer(res, async () => {
      const user = req.user?.username;
      const permission = editPermission(RED.settings, user);
      if (!permission.allowed) {
        audit(RED, EDIT_ACTION, { config: req.params.config, error: permission.reason }, req);
        return { status: 403, body: { error: permission.reason } };
      }
      const found = usableConfig(RED, req.params.config);
      if (!('config' in found)) return found;
      const messageId = (req.body as { messageId?: unknown } | undefined)?.messageId;
      if (typeof messageId !== 'string' || messageId === '') return { status: 400, body: { error: 'give the messageId of the parked message to edit' } };
      const copyId = randomUUID();
      const replayId = randomUUID();
      const about = { config: req.params.config, queue: found.queue, messageId };
      try {
        const edit = readEdit(req.body);
        const result = await editParked(found.config, messageId, edit, { user, copyId, replayId, userId: `parking-edit-${copyId}` });
        if (!result) return { status: 404, body: { error: 'this message is no longer in the parking queue' } };
        audit(RED, EDIT_ACTION, { ...about, count: result.replayed, copyId, replayId, headers: result.changed, bodyChanged: result.bodyChanged }, req);
        return { status: 200, body: { queue: found.queue, replayed: result.replayed, remaining: result.remaining, messageId: copyId, replayOf: messageId, replayId } };
      } catch (err) {
        audit(RED, EDIT_ACTION, { ...about, error: err instanceof Error ? err.message : String(err) }, req);
        if (err instanceof EditRefused) return { status: 400, body: { error: err.message } };
        throw err;
      }
    });
  });
}
