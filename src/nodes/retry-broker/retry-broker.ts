/**
 * `retry-broker` config node: one shared AMQP connection per broker, the way the core MQTT broker
 * node shares its client. Nodes register as users; the connection opens with the first and closes
 * with the last, and its state is pushed to every user's status.
 */
import { BrokerConnection } from '../../lib/broker-connection';
import { DEFAULT_PUBLISH_LIMITS } from '../../lib/publish-buffer';
import { resolveConnectTarget, isUnresolvedEnv } from '../../lib/connection-settings';
import { ManagementApi } from '../../lib/management-api';
import { connectionStatus, type BrokerUser, type RetryBrokerNode } from '../shared/broker-node';
import { MAX_TIMER_SECONDS, readNumberFields } from '../shared/number-fields';
import { stringProp, type Node, type NodeAPI, type NodeDef } from '../shared/node-red';

const MIB = 1024 * 1024;
const BUFFER_STATUS_MS = 250;

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
      bufferMessages: { label: 'publish buffer (messages)', fallback: DEFAULT_PUBLISH_LIMITS.maxMessages, min: 1, integer: true },
      bufferMiB: { label: 'publish buffer (MiB)', fallback: DEFAULT_PUBLISH_LIMITS.maxBytes / MIB, min: 0.001, unit: 'MiB' },
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
      publishLimits: { maxMessages: numbers.values.bufferMessages, maxBytes: numbers.values.bufferMiB * MIB },
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

    const buffer = node.connection.publishers.buffer;
    node.connectionStatus = () => connectionStatus(node.connection.state, buffer.state);
    let lastStatus = '';
    const pushStatus = (): void => {
      const status = node.connectionStatus();
      if (status.text === lastStatus) return;
      lastStatus = status.text ?? '';
      for (const user of users.values()) user.status(status);
    };
    // The buffer changes with every publish under back-pressure: a few status updates a second suffice.
    let bufferTimer: NodeJS.Timeout | undefined;
    buffer.on('change', () => {
      bufferTimer ??= setTimeout(() => {
        bufferTimer = undefined;
        pushStatus();
      }, BUFFER_STATUS_MS);
    });
    let blockedLogged: string | undefined;
    buffer.on('change', () => {
      const { blockedBy } = buffer.state;
      if (blockedBy === blockedLogged) return;
      blockedLogged = blockedBy;
      if (blockedBy !== undefined) node.warn(`${target.display} blocks publishing: ${blockedBy}; publishes wait (at most ${buffer.state.limits.maxMessages} messages)`);
      else node.log(`${target.display} accepts publishes again`);
    });

    let lastLogged = '';
    node.connection.on('state', (state) => {
      lastStatus = '';
      pushStatus();
      // Log each distinct problem once, not on every reconnect attempt.
      const line = state.phase === 'waiting' ? `cannot connect to ${target.display}: ${state.error ?? ''}` : state.phase === 'connected' ? `connected to ${target.display}` : '';
      if (line && line !== lastLogged) {
        lastLogged = line;
        if (state.phase === 'connected') node.log(line);
        else node.warn(line);
      }
    });

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
      clearTimeout(bufferTimer);
      users.clear();
      node.connection.close().then(done, done);
    });
  }
  RED.nodes.registerType('retry-broker', RetryBroker as (this: Node, def: NodeDef) => void, {
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
  });
};
