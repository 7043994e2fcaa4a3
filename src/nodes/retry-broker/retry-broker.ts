/**
 * `retry-broker` config node: one shared AMQP connection per broker, the way the core MQTT broker
 * node shares its client. Nodes register as users; the connection opens with the first and closes
 * with the last, and its state is pushed to every user's status.
 */
import { BrokerConnection, type ConnectTarget, isUnresolvedEnv, resolveConnectTargets, resolveEnvFields } from '../../lib/connection';
import { QueueWatch } from '../../lib/parking';
import { ManagementApi, chooseManagementApi } from '../../lib/topology';
import { readNumberFields } from '../../lib/rules';
import { NUMBER_FIELDS } from '../shared/properties';
import { brokerSettingsOf, connectionStatus, type BrokerUser, type RetryBrokerNode } from '../shared/broker-node';
import { translator } from '../shared/i18n';
import { metrics } from '../shared/metrics';
import { StatusUpdates } from '../shared/status';
import { tlsSocketOptions } from '../shared/tls-config';
import { stringProp, type Node, type NodeAPI, type NodeDef } from '../shared/node-red';

const MIB = 1024 * 1024;
const BUFFER_STATUS_MS = 250;

export = function register(RED: NodeAPI): void {
  function RetryBroker(this: RetryBrokerNode, saved: NodeDef): void {
    RED.nodes.createNode(this, saved);
    const node = this;
    // URL, host and management URL may name an environment variable (flow, group or process env).
    const def = resolveEnvFields(saved, (name) => RED.util.evaluateNodeProperty(name, 'env', node));
    const users = new Map<string, BrokerUser>();
    const url = stringProp(def.url);
    const numbers = readNumberFields(def, NUMBER_FIELDS['retry-broker']);
    const tlsId = stringProp(def.tlsConfig);
    let targets: ConnectTarget[] = [];
    let socketOptions: Record<string, unknown> | undefined;
    let configError: string | undefined;
    try {
      const settings = brokerSettingsOf(def, node.credentials);
      if (settings.problems.length > 0) throw new Error(settings.problems.join('; '));
      targets = resolveConnectTargets(settings.settings);
      socketOptions = tlsSocketOptions(RED, tlsId, targets);
    } catch (err) {
      configError = (err as Error).message;
    }
    if (url !== '' && isUnresolvedEnv(url) && !configError) {
      node.warn(`broker URL ${url}: environment variable not set, using ${targets.map((t) => t.display).join(', ')}`);
    }
    node.display = configError ? 'invalid broker configuration' : targets.map((t) => t.display).join(', ');
    const first = targets[0];
    const management = chooseManagementApi(stringProp(def.managementUrl), first);
    try {
      node.managementApi = first && management.kind !== 'none' ? ManagementApi.forTarget(management.url, first, management.kind === 'default') : undefined;
    } catch (err) {
      configError ??= (err as Error).message;
    }
    // An example imported as it is: not a problem, said once in the log (not the debug sidebar).
    if (management.kind === 'default' && !configError) node.log(management.note);
    if (configError) node.error(`broker configuration not usable: ${configError}`);
    node.connection = new BrokerConnection({
      targets,
      configError,
      socketOptions,
      connectionName: `node-red ${stringProp(def.name) || node.id}`,
      reconnect: { initialMs: 1000, maxMs: numbers.values.reconnectMax * 1000 },
      publishLimits: { maxMessages: numbers.values.bufferMessages, maxBytes: numbers.values.bufferMiB * MIB },
    });
    node.queueWatch = new QueueWatch(node.connection);

    /** The URL of the node connected to (of a cluster), else all of them. */
    const shown = (): string => targets.find((t) => t.address === node.connection.state.address)?.display ?? node.display;
    const buffer = node.connection.publishers.buffer;
    const t = translator(RED);
    node.connectionStatus = () => connectionStatus(node.connection.state, buffer.state, t);
    // Pushed to every user: at once when the connection's state changes; the buffer changes with every
    // publish under back-pressure, where a few updates a second suffice.
    const status = new StatusUpdates(
      () => node.connectionStatus(),
      (shown) => {
        for (const user of users.values()) user.status(shown);
      },
      BUFFER_STATUS_MS,
    );
    buffer.on('change', () => status.soon());
    let blockedLogged: string | undefined;
    buffer.on('change', () => {
      const { blockedBy } = buffer.state;
      if (blockedBy === blockedLogged) return;
      blockedLogged = blockedBy;
      if (blockedBy !== undefined) node.warn(`${shown()} blocks publishing: ${blockedBy}; publishes wait (at most ${buffer.state.limits.maxMessages} messages)`);
      else node.log(`${shown()} accepts publishes again`);
    });

    let lastLogged = '';
    node.connection.on('state', (state) => {
      status.forget();
      status.now();
      // Log each distinct problem once, not on every reconnect attempt.
      const line = state.phase === 'waiting' ? `cannot connect to ${node.display}: ${state.error ?? ''}` : state.phase === 'connected' ? `connected to ${shown()}` : '';
      if (line && line !== lastLogged) {
        lastLogged = line;
        if (state.phase === 'connected') node.log(line);
        else node.warn(line);
      }
    });

    node.register = (user) => {
      users.set(user.id, user);
      user.status(node.connectionStatus());
      // Every node that depends on a broken configuration says so, in its status and as an error.
      // Users register from their constructor, before Node-RED can find them by id: report just after.
      const problem = configError;
      if (problem) setImmediate(() => RED.nodes.getNode(user.id)?.error(`broker '${stringProp(def.name) || node.id}' not usable: ${problem}`));
      node.connection.acquire(user.id);
    };
    node.deregister = async (user) => {
      users.delete(user.id);
      await node.connection.release(user.id);
    };
    const removeGauges = metrics.addBroker({
      id: node.id,
      broker: node.display,
      buffer: () => {
        const state = buffer.state;
        return { messages: state.messages, bytes: state.bytes, blocked: state.blockedBy !== undefined };
      },
    });
    node.on('close', (_removed, done) => {
      status.stop();
      node.queueWatch.close();
      removeGauges();
      users.clear();
      node.connection.close().then(done, done);
    });
  }
  RED.nodes.registerType('retry-broker', RetryBroker as (this: Node, def: NodeDef) => void, {
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
  });
};
