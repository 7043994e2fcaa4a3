/**
 * Reads queue arguments and exchange types through RabbitMQ's management HTTP API, so check mode can
 * compare arguments (AMQP's passive declare only says whether a queue exists). Read-only requests.
 */
import type { DefinitionReader } from './topology-broker';
import type { QueueArguments } from './topology';

export interface ManagementApiOptions {
  /** e.g. http://127.0.0.1:15672 */
  baseUrl: string;
  vhost: string;
  username: string;
  password: string;
  timeoutMs?: number;
}

export class ManagementApi implements DefinitionReader {
  constructor(private readonly options: ManagementApiOptions) {}

  async queueArguments(name: string): Promise<QueueArguments | undefined> {
    const body = await this.get(`queues/${encodeURIComponent(this.options.vhost)}/${encodeURIComponent(name)}`);
    const args = (body as { arguments?: unknown } | undefined)?.arguments;
    return args && typeof args === 'object' ? (args as QueueArguments) : undefined;
  }

  async exchangeType(name: string): Promise<string | undefined> {
    const type = (await this.exchange(name))?.type;
    return typeof type === 'string' ? type : undefined;
  }

  async exchangeArguments(name: string): Promise<Record<string, unknown> | undefined> {
    const args = (await this.exchange(name))?.arguments;
    return args && typeof args === 'object' ? (args as Record<string, unknown>) : undefined;
  }

  private async exchange(name: string): Promise<{ type?: unknown; arguments?: unknown } | undefined> {
    return (await this.get(`exchanges/${encodeURIComponent(this.options.vhost)}/${encodeURIComponent(name)}`)) as { type?: unknown; arguments?: unknown } | undefined;
  }

  /** undefined on 404 (the AMQP check reports missing objects); throws on anything else unexpected. */
  private async get(path: string): Promise<unknown> {
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/api/${path}`;
    const auth = Buffer.from(`${this.options.username}:${this.options.password}`).toString('base64');
    let response: Response;
    try {
      response = await fetch(url, { headers: { authorization: `Basic ${auth}` }, signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000) });
    } catch (err) {
      throw new Error(`management API at ${this.options.baseUrl} did not answer: ${(err as Error).message}`, { cause: err });
    }
    if (response.status === 404) return undefined;
    if (response.status === 401) throw new Error(`management API at ${this.options.baseUrl} refused the credentials (401)`);
    if (!response.ok) throw new Error(`management API at ${this.options.baseUrl} answered ${response.status}`);
    return response.json();
  }
}
