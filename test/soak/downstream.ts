/**
 * The soak's downstream: an HTTP server the flow calls once per message (POST /effect, `{ "id" }`),
 * controlled by the soak. It answers 400 for the permanent ids (always), 503 while an outage lasts,
 * else 200 — and records every 200 it gave (the effect), outside Node-RED.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** About 2 % of the ids are answered 400 for good: the flow's `4xx` rule parks them at once, reason naming the 400. */
export const isPermanent = (id: string): boolean => {
  const n = Number(id.slice(id.lastIndexOf('-') + 1));
  return Number.isInteger(n) && n % 50 === 7;
};

export interface Effect {
  id: string;
  /** Date.now() when it was answered 200. */
  at: number;
  /** The delivery that called: its consumer tag, redelivered or not, its attempt (for a repeated effect's story). */
  via?: string;
}

async function body(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

export class Downstream {
  readonly effects: Effect[] = [];
  /** Ids answered 400. */
  readonly refused = new Set<string>();
  private outageUntil = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Downstream> {
    const holder: { self?: Downstream } = {};
    const server = createServer((req, res) => {
      void body(req).then((text) => {
        const status = holder.self?.answer(text) ?? 503;
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.self = new Downstream(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/effect`);
    return holder.self;
  }

  /** Answers 503 to every call for `ms`. */
  fail(ms: number): void {
    this.outageUntil = Date.now() + ms;
  }

  private answer(text: string): number {
    let id: unknown;
    let via: unknown;
    try {
      ({ id, via } = JSON.parse(text) as { id?: unknown; via?: unknown });
    } catch {
      return 400;
    }
    if (typeof id !== 'string') return 400;
    if (isPermanent(id)) {
      this.refused.add(id);
      return 400;
    }
    if (Date.now() < this.outageUntil) return 503;
    this.effects.push({ id, at: Date.now(), ...(typeof via === 'string' ? { via } : {}) });
    return 200;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
