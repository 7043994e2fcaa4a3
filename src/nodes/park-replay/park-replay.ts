/**
 * `park-replay`: the runbook's last step as a node. Each input replays parked messages of a retry
 * config back to where they were first published (confirmed), then removes them from parking.
 */
import { replayParked } from '../../lib/replay';
import { numberProp, type Node, type NodeAPI, type NodeDef } from '../shared/node-red';
import { findRetryConfig } from '../shared/retry-config-node';

export = function register(RED: NodeAPI): void {
  function ParkReplay(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const config = findRetryConfig(RED, def.config);
    const configuredMax = Math.max(1, Math.floor(numberProp(def.max, 100)));
    const resetAttempts = def.resetAttempts !== false;
    let running = false;
    node.on('input', (msg, send, done) => {
      const topology = config?.topology;
      const broker = config?.broker;
      if (!topology || !broker) {
        done(new Error(`replay: ${config ? config.problems.join('; ') || 'no broker' : 'no retry configuration selected'}`));
        return;
      }
      if (running) {
        node.warn('replay already running: this trigger is ignored');
        done();
        return;
      }
      // Registered only while replaying: an idle replay node keeps no connection open.
      const user = { id: node.id, status: () => undefined };
      broker.register(user);
      running = true;
      node.status({ fill: 'blue', shape: 'dot', text: 'replaying' });
      const max = typeof msg.max === 'number' && msg.max > 0 ? Math.floor(msg.max) : configuredMax;
      broker.connection
        .whenConnected()
        .then(() => replayParked(broker.connection, topology, { max, resetAttempts }))
        .then(
          (result) => {
            node.status({ fill: result.remaining > 0 ? 'yellow' : 'green', shape: 'dot', text: `replayed ${result.replayed}, ${result.remaining} left` });
            msg.payload = result;
            send(msg);
            done();
          },
          (err: unknown) => {
            node.status({ fill: 'red', shape: 'ring', text: 'replay failed' });
            done(err instanceof Error ? err : new Error(String(err)));
          },
        )
        .finally(() => {
          running = false;
          void broker.deregister(user);
        });
    });
  }
  RED.nodes.registerType('park-replay', ParkReplay);
};
