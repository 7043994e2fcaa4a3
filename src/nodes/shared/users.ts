/**
 * The nodes using a config node (a broker's connection, a database's pool, a store), the way the core
 * MQTT broker node keeps its users: each registers and deregisters, the config node pushes its status
 * to every one, and closes its resource only once they are done: in a full redeploy Node-RED closes
 * every node at once, while a consumer still drains its messages (up to 10 s) and records or releases
 * their keys through the store.
 */
import type { NodeStatus } from './node-red';

/** A node using a config node: gets the config node's status pushed. */
export interface ConfigUser {
  id: string;
  status(status: NodeStatus): void;
}

/** Node-RED gives a node 15 s to close; a consumer drains for at most 10 s. */
const WAIT_FOR_USERS_MS = 12_000;

export class ConfigUsers {
  private readonly users = new Map<string, ConfigUser>();
  private gone: (() => void) | undefined;

  get size(): number {
    return this.users.size;
  }

  add(user: ConfigUser): void {
    this.users.set(user.id, user);
  }

  remove(user: ConfigUser): void {
    this.users.delete(user.id);
    if (this.users.size === 0) this.gone?.();
  }

  /** Shows the status on every user. */
  broadcast(status: NodeStatus): void {
    for (const user of this.users.values()) user.status(status);
  }

  /** Resolves once every user has gone (or after the wait): then the resource may close. */
  whenUnused(waitMs = WAIT_FOR_USERS_MS): Promise<void> {
    if (this.users.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.gone = undefined;
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      this.gone = done;
    });
  }
}
