/**
 * `retry-broker` config node: one shared AMQP connection per broker, the way the core MQTT broker
 * node shares its client. Nodes register as users; the connection opens with the first and closes
 * with the last, and its state is pushed to every user's status.
 */
import { BrokerConnection } from '../../lib/broker-connection';
import { resolveConnectTarget, isUnresolvedEnv } from '../../lib/connection-settings';
import { ManagementApi } from '../../lib/management-api';
import { connectionStatus, type BrokerUser, type RetryBrokerNode } from '../shared/broker-node';
import { MAX_TIMER_SECONDS, readNumberFields } from '../shared/number-fields';
import { stringProp, type Node, type NodeAPI, type NodeDef } from '../shared/node-red';

export = function register(RED: NodeAPI): void {
  function RetryBroker(this: RetryBrokerNode, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const users = new Map<string, BrokerUser>();
    const url = stringProp(def.url);
    if (url !== '' && isUnresolvedEnv(url)) {
      node.log(`broker URL ${url}: environment variable not set, using host ${stringProp(def.host, '127.0.0.1')}`);
    }
    const numbers = readNumberFields(def, {
      port: { label: 'port', fallback: 5672, min: 1, max: 65535, integer: true },
      heartbeat: { label: 'heartbeat', fallback: 30, min: 0, max: 65535, integer: true, unit: 's' },
      reconnectMax: { label: 'maximum reconnect delay', fallback: 30, min: 1, max: MAX_TIMER_SECONDS, unit: 's' },
    });
    let target: { url: string; display: string };
    try {
      if (numbers.problems.length > 0) throw new Error(numbers.problems.join('; '));
      target = resolveConnectTarget({
        url,
        host: stringProp(def.host, '127.0.0.1'),
        port: numbers.values.port,
        vhost: stringProp(def.vhost, '/'),
        tls: def.tls === true,
        username: node.credentials?.user,
        password: node.credentials?.password,
        heartbeat: numbers.values.heartbeat,
      });
    } catch (err) {
      node.error((err as Error).message);
      target = { url: 'amqp://invalid.invalid', display: 'invalid broker configuration' };
    }
    node.display = target.display;
    node.connection = new BrokerConnection({
      url: target.url,
      connectionName: `node-red ${stringProp(def.name) || node.id}`,
      reconnect: { initialMs: 1000, maxMs: numbers.values.reconnectMax * 1000 },
    });
    const parsed = new URL(target.url);
    const managementUrl = stringProp(def.managementUrl);
    node.managementApi =
      managementUrl && !isUnresolvedEnv(managementUrl)
        ? new ManagementApi({
            baseUrl: managementUrl,
            vhost: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || '/',
            username: decodeURIComponent(parsed.username) || 'guest',
            password: decodeURIComponent(parsed.password) || 'guest',
          })
        : undefined;

    let lastLogged = '';
    node.connection.on('state', (state) => {
      const status = connectionStatus(state);
      for (const user of users.values()) user.status(status);
      // Log each distinct problem once, not on every reconnect attempt.
      const line = state.phase === 'waiting' ? `cannot connect to ${target.display}: ${state.error ?? ''}` : state.phase === 'connected' ? `connected to ${target.display}` : '';
      if (line && line !== lastLogged) {
        lastLogged = line;
        if (state.phase === 'connected') node.log(line);
        else node.warn(line);
      }
    });

    node.connectionStatus = () => connectionStatus(node.connection.state);
    node.register = (user) => {
      users.set(user.id, user);
      user.status(node.connectionStatus());
      node.connection.acquire(user.id);
    };
    node.deregister = async (user) => {
      users.delete(user.id);
      await node.connection.release(user.id);
    };
    node.on('close', (_removed, done) => {
      users.clear();
      node.connection.close().then(done, done);
    });
  }
  RED.nodes.registerType('retry-broker', RetryBroker as (this: Node, def: NodeDef) => void, {
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
  });
};
