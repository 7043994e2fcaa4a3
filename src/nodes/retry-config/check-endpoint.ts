/**
 * The retry-config dialog's "Check topology" button: an admin endpoint that checks the topology of
 * the dialog's values (saved or not) on the broker of the chosen broker node, passively, on a
 * connection of its own. Passwords never leave the runtime: an unchanged password comes from the
 * stored credentials, and the answer names the broker without it.
 */
import { resolveConnectTargets } from '../../lib/connection';
import { probeTopology } from '../../lib/topology';
import { brokerSettingsOf } from '../shared/broker-node';
import { dialogBrokerValues } from './dialog-broker';
import { tlsSocketOptions } from '../shared/tls-config';
import { type AdminRequest, type AdminResponse, type NodeAPI, record, stringProp } from '../shared/node-red';
import { NODE_TYPE } from '../shared/node-types';
import { topologyFromDefinition } from '../shared/retry-config-node';

export const CHECK_TOPOLOGY_PATH = '/rabbitmq-retry/check-topology';
export const WRITE_PERMISSION = 'rabbitmq-retry.write';
/** What the editor sends for a password it has not changed. */
const UNCHANGED_PASSWORD = '__PWRD__';

interface CheckRequest {
  config?: Record<string, unknown>;
  broker?: Record<string, unknown> & { id?: unknown };
  credentials?: { user?: unknown; password?: unknown };
}

/** The dialog's credentials over the stored ones: an empty or unchanged field keeps the stored value. */
function credentialsFor(RED: NodeAPI, brokerId: string, given: CheckRequest['credentials']): Record<string, string | undefined> {
  const stored = brokerId ? (RED.nodes.getCredentials(brokerId) ?? {}) : {};
  const user = typeof given?.user === 'string' ? given.user : undefined;
  const password = typeof given?.password === 'string' && given.password !== UNCHANGED_PASSWORD ? given.password : undefined;
  return { user: user ?? stored.user, password: password ?? stored.password };
}

async function check(RED: NodeAPI, body: CheckRequest): Promise<{ status: number; body: unknown }> {
  const config = record(body.config);
  const broker = record(body.broker);
  let topology;
  try {
    topology = topologyFromDefinition({ ...config, id: 'check', type: NODE_TYPE.retryConfig });
  } catch (err) {
    return { status: 400, body: { error: (err as Error).message } };
  }
  const brokerId = stringProp(broker.id);
  const resolved = dialogBrokerValues(RED, broker);
  let targets;
  let socketOptions;
  try {
    const settings = brokerSettingsOf(resolved, credentialsFor(RED, brokerId, body.credentials));
    if (settings.problems.length > 0) throw new Error(settings.problems.join('; '));
    targets = resolveConnectTargets(settings.settings);
    // The TLS configuration as deployed: certificates are files the runtime reads.
    socketOptions = tlsSocketOptions(RED, stringProp(broker.tlsConfig), targets);
  } catch (err) {
    return { status: 400, body: { error: (err as Error).message } };
  }
  const managementUrl = stringProp(resolved.managementUrl);
  try {
    const inspection = await probeTopology(targets, topology, { socketOptions, managementUrl });
    return { status: 200, body: { mode: topology.mode, ...inspection } };
  } catch (err) {
    // A connect or management API failure: the whole check failed, not one object.
    return { status: 502, body: { broker: targets.map((t) => t.display).join(', '), error: (err as Error).message } };
  }
}

export function registerCheckEndpoint(RED: NodeAPI): void {
  RED.httpAdmin.post(CHECK_TOPOLOGY_PATH, RED.auth.needsPermission(WRITE_PERMISSION), (req: AdminRequest, res: AdminResponse) => {
    check(RED, record(req.body) as CheckRequest).then(
      (answer) => res.status(answer.status).json(answer.body),
      (err: unknown) => res.status(500).json({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
}
