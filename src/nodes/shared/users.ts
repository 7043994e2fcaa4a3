/**
 * The nodes using a config node's resource (a pool, a store), and closing it only once they are done:
 * in a full redeploy Node-RED closes every node at once, while a consumer still drains its messages
 * (up to 10 s) and records or releases their keys through the store.
 */
import type { NodeStatus } from './node-red';

export interface ResourceUser {
  id: string;
  status(status: NodeStatus): void;
}

/** Node-RED gives a node 15 s to close; a consumer drains for at most 10 s. */
const WAIT_FOR_USERS_MS = 12_000;

export class ResourceUsers {
  readonly all = new Map<string, ResourceUser>();
  private gone: (() => void) | undefined;

  add(user: ResourceUser): void {
    this.all.set(user.id, user);
  }

  remove(user: ResourceUser): void {
    this.all.delete(user.id);
    if (this.all.size === 0) this.gone?.();
  }

  /** Resolves once every user has gone (or after the wait): then the resource may close. */
  whenUnused(waitMs = WAIT_FOR_USERS_MS): Promise<void> {
    if (this.all.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, waitMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.gone = done;
    });
  }
}
