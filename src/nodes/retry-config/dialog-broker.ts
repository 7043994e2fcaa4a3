/** The broker a retry-config dialog names, as its admin endpoints (check, definitions) read it. */
import { resolveEnvFields } from '../../lib/connection';
import { stringProp, type NodeAPI } from '../shared/node-red';

/**
 * A broker dialog's values (saved or not) with its env fields and `${NAME}` resolved the way the
 * deployed broker node reads them: its flow's env, else the process's (the admin endpoints' view).
 */
export function dialogBrokerValues(RED: NodeAPI, broker: Record<string, unknown>): Record<string, unknown> {
  const brokerId = stringProp(broker.id);
  const deployed = brokerId ? RED.nodes.getNode(brokerId) : null;
  return resolveEnvFields(broker, (name) => RED.util.evaluateNodeProperty(name, 'env', deployed));
}
