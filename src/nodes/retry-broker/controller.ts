/**
 * A retry-broker node at work: one shared AMQP connection per broker, the way the core MQTT broker
 * node shares its client. Nodes register as users; the connection opens with the first and closes
 * with the last, its state is pushed to every user's status, and each distinct problem is logged once.
 * What it listens to is removed when it closes.
 */
import { BrokerConnection, type ConnectionState } from '../../lib/connection';
import { QueueWatch } from '../../lib/parking';
import type { RetryBrokerNode } from '../shared/broker-node';
import { translator } from '../shared/i18n';
import { metrics } from '../shared/metrics';
import type { NodeAPI } from '../shared/node-red';
import { StatusUpdates } from '../shared/status';
import { ConfigUsers, type ConfigUser } from '../shared/users';
import type { BrokerSetup } from './settings';
import { connectionStatus } from './status';

/** Under back-pressure the buffer changes with every publish: a few status updates a second suffice. */
const BUFFER_STATUS_MS = 250;

export class BrokerController {
  private readonly users = new ConfigUsers();
  private readonly status: StatusUpdates;
  private readonly removeGauges: () => void;
  private blockedLogged: string | undefined;
  private lastLogged = '';

  /** @param name the node's name (else its id), for the errors its users log */
  constructor(
    private readonly RED: NodeAPI,
    private readonly node: RetryBrokerNode,
    private readonly name: string,
    private readonly setup: BrokerSetup,
  ) {
    node.display = setup.display;
    node.managementApi = setup.managementApi;
    node.connection = new BrokerConnection(setup.connection);
    node.queueWatch = new QueueWatch(node.connection);
    const t = translator(RED);
    const buffer = node.connection.publishers.buffer;
    node.connectionStatus = () => connectionStatus(node.connection.state, buffer.state, t);
    // Pushed to every user: at once when the connection's state changes, within BUFFER_STATUS_MS when the buffer does.
    this.status = new StatusUpdates(
      () => node.connectionStatus(),
      (shown) => this.users.broadcast(shown),
      BUFFER_STATUS_MS,
    );
    buffer.on('change', this.onBufferChange);
    node.connection.on('state', this.onState);
    node.register = (user) => this.register(user);
    node.deregister = (user) => this.deregister(user);
    this.removeGauges = metrics.addBroker({
      id: node.id,
      broker: node.display,
      buffer: () => {
        const state = buffer.state;
        return { messages: state.messages, bytes: state.bytes, blocked: state.blockedBy !== undefined };
      },
    });
  }

  register(user: ConfigUser): void {
    this.users.add(user);
    user.status(this.node.connectionStatus());
    // Every node that depends on a broken configuration says so, in its status and as an error.
    // Users register from their constructor, before Node-RED can find them by id: report just after.
    const problem = this.setup.configError;
    if (problem) setImmediate(() => this.RED.nodes.getNode(user.id)?.error(`broker '${this.name}' not usable: ${problem}`));
    this.node.connection.acquire(user.id);
  }

  async deregister(user: ConfigUser): Promise<void> {
    this.users.remove(user);
    await this.node.connection.release(user.id);
  }

  async close(): Promise<void> {
    this.status.stop();
    this.node.connection.publishers.buffer.off('change', this.onBufferChange);
    this.node.connection.off('state', this.onState);
    this.node.queueWatch.close();
    this.removeGauges();
    await this.node.connection.close();
  }

  /** The URL of the node connected to (of a cluster), else all of them. */
  private shown(): string {
    return this.setup.targets.find((t) => t.address === this.node.connection.state.address)?.display ?? this.node.display;
  }

  private readonly onBufferChange = (): void => {
    this.status.soon();
    const { blockedBy, limits } = this.node.connection.publishers.buffer.state;
    if (blockedBy === this.blockedLogged) return;
    this.blockedLogged = blockedBy;
    if (blockedBy !== undefined) this.node.warn(`${this.shown()} blocks publishing: ${blockedBy}; publishes wait (at most ${limits.maxMessages} messages)`);
    else this.node.log(`${this.shown()} accepts publishes again`);
  };

  private readonly onState = (state: ConnectionState): void => {
    this.status.forget();
    this.status.now();
    // Log each distinct problem once, not on every reconnect attempt.
    const line = state.phase === 'waiting' ? `cannot connect to ${this.node.display}: ${state.error ?? ''}` : state.phase === 'connected' ? `connected to ${this.shown()}` : '';
    if (!line || line === this.lastLogged) return;
    this.lastLogged = line;
    if (state.phase === 'connected') this.node.log(line);
    else this.node.warn(line);
  };
}
