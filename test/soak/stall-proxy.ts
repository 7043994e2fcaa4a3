/**
 * A TCP proxy between the Node-RED processes and the soak's broker, which can hold every connection
 * open but silent for a while: nothing is forwarded either way (what arrives waits, in order, as a
 * stalled network holds it), no socket is closed. Whoever notices first — the client's or the
 * broker's heartbeat — closes its side, and the proxy closes the other; a connection that outlives the
 * stall gets what waited and carries on.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** One direction of a proxied connection: forwards, or holds what arrives while stalled. */
class Direction {
  private held: Buffer[] = [];

  constructor(
    private readonly to: Socket,
    private readonly stalled: () => boolean,
  ) {}

  carry(chunk: Buffer): void {
    if (this.stalled() || this.held.length > 0) this.held.push(chunk);
    else this.to.write(chunk);
  }

  /** The stall is over: what waited goes on, in order. */
  flush(): void {
    for (const chunk of this.held) this.to.write(chunk);
    this.held = [];
  }
}

export class StallProxy {
  private stalledUntil = 0;
  private readonly directions = new Set<Direction>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<StallProxy> {
    const holder: { proxy?: StallProxy } = {};
    const server = createServer((client) => holder.proxy?.pipe(client, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.proxy = new StallProxy(server, (server.address() as AddressInfo).port);
    return holder.proxy;
  }

  private pipe(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    const stalled = (): boolean => Date.now() < this.stalledUntil;
    const up = new Direction(upstream, stalled);
    const down = new Direction(client, stalled);
    this.directions.add(up).add(down);
    this.sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => up.carry(chunk));
    upstream.on('data', (chunk: Buffer) => down.carry(chunk));
    const close = (): void => {
      this.directions.delete(up);
      this.directions.delete(down);
      this.sockets.delete(client);
      this.sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', close);
      socket.on('close', close);
    }
  }

  /** Every connection silent for `ms`, then what waited flows on. */
  async stall(ms: number): Promise<void> {
    this.stalledUntil = Date.now() + ms;
    await new Promise((resolve) => setTimeout(resolve, ms));
    for (const direction of this.directions) direction.flush();
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
