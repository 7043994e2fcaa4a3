/**
 * The retry-config dialog's "Export definitions" button: the exchanges, queues (with their arguments)
 * and bindings of the dialog's values (saved or not) as a RabbitMQ definitions file, in the vhost of
 * the chosen broker node, for `rabbitmqctl import_definitions` or the management UI. Built from the
 * plan declare mode asserts, so it is what check mode checks for. Touches no broker and holds no
 * credentials: read permission is enough. `GET …/:config` gives the same for a deployed configuration.
 */
import { resolveConnectTargets } from '../../lib/connection';
import { definitionsFileName, planTopology, topologyDefinitions } from '../../lib/topology';
import { brokerSettingsOf } from '../shared/broker-node';
import { dialogBrokerValues } from './dialog-broker';
import { type AdminRequest, type AdminResponse, type NodeAPI, type NodeDef, record, stringProp } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { topologyFromDefinition } from '../shared/retry-config-node';

export const DEFINITIONS_PATH = '/rabbitmq-retry/topology-definitions';
export const READ_PERMISSION = 'rabbitmq-retry.read';

type Answer = { status: number; body: unknown; file?: string };

/** The vhost the broker values connect to: the URL's path when a URL is set, else the vhost field; '/' without a broker. */
function vhostOf(RED: NodeAPI, broker: Record<string, unknown>): string {
  if (Object.keys(broker).length === 0) return '/';
  const settings = brokerSettingsOf(dialogBrokerValues(RED, broker), {});
  if (settings.problems.length > 0) throw new Error(settings.problems.join('; '));
  return resolveConnectTargets(settings.settings)[0]?.vhost ?? '/';
}

function definitionsOf(RED: NodeAPI, config: Record<string, unknown>, broker: Record<string, unknown>): Answer {
  try {
    const topology = topologyFromDefinition({ ...config, id: stringProp(config.id) || 'export', type: NODE_TYPE.retryConfig });
    const definitions = topologyDefinitions(planTopology(topology), vhostOf(RED, broker));
    return { status: 200, body: definitions, file: definitionsFileName(topology.mainQueue) };
  } catch (err) {
    return { status: 400, body: { error: (err as Error).message } };
  }
}

/** The deployed definitions of a retry-config node and its broker node, by id. */
function deployedDefinition(RED: NodeAPI, id: string): { config?: NodeDef; broker?: NodeDef } {
  let config: NodeDef | undefined;
  const all = new Map<string, NodeDef>();
  RED.nodes.eachNode((def) => {
    all.set(def.id, def);
    if (def.id === id && def.type === NODE_TYPE.retryConfig) config = def;
  });
  const broker = config ? all.get(stringProp(config.broker)) : undefined;
  return { config, broker: broker?.type === NODE_TYPE.retryBroker ? broker : undefined };
}

function send(res: AdminResponse, answer: Answer): void {
  if (answer.status !== 200 || !answer.file) {
    res.status(answer.status).json(answer.body);
    return;
  }
  res
    .status(200)
    .set('Content-Type', 'application/json; charset=utf-8')
    .set('Content-Disposition', `attachment; filename="${answer.file}"`)
    .send(`${JSON.stringify(answer.body, null, 2)}\n`);
}

export function registerDefinitionsEndpoint(RED: NodeAPI): void {
  RED.httpAdmin.post(DEFINITIONS_PATH, RED.auth.needsPermission(READ_PERMISSION), (req: AdminRequest, res: AdminResponse) => {
    const body = record(req.body);
    send(res, definitionsOf(RED, record(body.config), record(body.broker)));
  });
  RED.httpAdmin.get(`${DEFINITIONS_PATH}/:config`, RED.auth.needsPermission(READ_PERMISSION), (req: AdminRequest, res: AdminResponse) => {
    const id = req.params.config ?? '';
    const { config, broker } = deployedDefinition(RED, id);
    if (!config) {
      res.status(404).json({ error: `no deployed retry configuration '${id}'` });
      return;
    }
    send(res, definitionsOf(RED, config, broker ?? {}));
  });
}
