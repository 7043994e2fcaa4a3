/**
 * Reads queue arguments and exchange types through RabbitMQ's management HTTP API, so check mode can
 * compare arguments (AMQP's passive declare only says whether a queue exists). Read-only requests.
 */
import { redactUrl, type ConnectTarget } from '../connection';
import type { DefinitionReader } from './apply';
import type { QueueArguments } from './arguments';

export interface ManagementApiOptions {
  /** e.g. http://127.0.0.1:15672; a user:password in it wins over username / password. */
  baseUrl: string;
  vhost: string;
  /** Usually the AMQP connection's. */
  username: string;
  password: string;
  timeoutMs?: number;
  /**
   * A default tried without being asked for (see chooseManagementApi): when it does not answer,
   * check mode compares no arguments instead of failing.
   */
  optional?: boolean;
}

/** Where to send a management API request and with which Authorization header. */
export interface ManagementEndpoint {
  /** The base URL without credentials (fetch refuses a URL with them) and without a trailing slash: safe to show. */
  baseUrl: string;
  /** `Basic …` of the URL's user:password when it has one, else of `username` / `password`. */
  authorization: string;
}

/**
 * A management API URL, perhaps with user:password in it, as a fetch can use it: the credentials
 * moved into an Authorization header. Throws when it is not an http(s) URL (never showing the password).
 */
export function managementEndpoint(baseUrl: string, username: string, password: string): ManagementEndpoint {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw new Error(`management API URL '${redactUrl(baseUrl.trim())}' is not a valid URL (in a user name or password, write / : @ % as %2F %3A %40 %25)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`management API URL must start with http:// or https://, not ${url.protocol}//`);
  if (url.username !== '') {
    username = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
    url.username = '';
    url.password = '';
  }
  return { baseUrl: url.toString().replace(/\/+$/, ''), authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` };
}

export class ManagementApi implements DefinitionReader {
  /** The base URL without credentials: fetch refuses a URL with them, and it is safe to show. */
  readonly baseUrl: string;
  private readonly authorization: string;

  /** Throws when the URL is not an http(s) URL; the message never contains the password. */
  constructor(private readonly options: ManagementApiOptions) {
    ({ baseUrl: this.baseUrl, authorization: this.authorization } = managementEndpoint(options.baseUrl, options.username, options.password));
  }

  /** The API of the broker a connect target points at, with its vhost and user (guest when it has none). */
  static forTarget(baseUrl: string, target: ConnectTarget, optional = false): ManagementApi {
    return new ManagementApi({ baseUrl, vhost: target.vhost, username: target.user, password: decodeURIComponent(new URL(target.url).password) || 'guest', optional });
  }

  /**
   * Why an optional API cannot be read now (it does not answer, or refuses the broker's credentials);
   * undefined when it can, and always for one that was asked for (its failures are errors).
   */
  async unavailable(): Promise<string | undefined> {
    if (this.options.optional !== true) return undefined;
    try {
      await this.get('whoami');
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  }

  async queueArguments(name: string): Promise<QueueArguments | undefined> {
    const body = await this.get(`queues/${encodeURIComponent(this.options.vhost)}/${encodeURIComponent(name)}`);
    const args = (body as { arguments?: unknown } | undefined)?.arguments;
    return args && typeof args === 'object' ? (args as QueueArguments) : undefined;
  }

  async exchangeType(name: string): Promise<string | undefined> {
    const type = (await this.exchange(name))?.type;
    return typeof type === 'string' ? type : undefined;
  }

  /** The exchange types the broker offers (its plugins' too): `/api/overview`'s `exchange_types`. */
  async exchangeTypes(): Promise<string[]> {
    const types = ((await this.get('overview')) as { exchange_types?: unknown } | undefined)?.exchange_types;
    return Array.isArray(types) ? types.map((t) => (t as { name?: unknown }).name).filter((n): n is string => typeof n === 'string') : [];
  }

  /** The names of the cluster's nodes (`/api/nodes`): one on a single broker, several in a cluster. */
  async clusterNodes(): Promise<string[]> {
    const nodes = await this.get('nodes?columns=name');
    return Array.isArray(nodes) ? nodes.map((n) => (n as { name?: unknown }).name).filter((n): n is string => typeof n === 'string') : [];
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
    const url = `${this.baseUrl}/api/${path}`;
    let response: Response;
    try {
      response = await fetch(url, { headers: { authorization: this.authorization }, signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000) });
    } catch (err) {
      throw new Error(`management API at ${this.baseUrl} did not answer: ${(err as Error).message}`, { cause: err });
    }
    if (response.status === 404) return undefined;
    if (response.status === 401) throw new Error(`management API at ${this.baseUrl} refused the credentials (401)`);
    if (!response.ok) throw new Error(`management API at ${this.baseUrl} answered ${response.status}`);
    return response.json();
  }
}
