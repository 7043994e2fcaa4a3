/** Where and how to connect, from a broker configuration. Pure (the editor runs it too). */
import { isEnvReference } from '../rules';

export interface BrokerSettings {
  /**
   * Full AMQP URL, or several (cluster) separated by commas or spaces; empty, or an unresolved
   * `${VAR}`, means: use host / port / vhost.
   */
  url: string;
  /** One host, or several `host[:port]` separated by commas or spaces (a cluster). */
  host: string;
  /** For hosts given without a port. */
  port: number;
  vhost: string;
  tls: boolean;
  /** From Node-RED credentials; a URL's own user:password wins over these. */
  username?: string;
  password?: string;
  /** Seconds; 0 disables heartbeats. */
  heartbeat: number;
}

export interface ConnectTarget {
  /** URL for amqplib, credentials included. */
  url: string;
  /** The same without the password, safe for status and logs. */
  display: string;
  /** `host:port`, for messages. */
  address: string;
  vhost: string;
  /** The user name that logs in ('guest' when none is given, as amqplib does). */
  user: string;
  tls: boolean;
}


/** True when the value is a Node-RED `${VAR}` reference whose variable was not set (Node-RED resolves set ones). */
export const isUnresolvedEnv = isEnvReference;

/**
 * The broker fields whose dialog input offers the `env` type, as the core nodes' typedInputs do: the
 * value is then a variable's name and `<field>Type` is `env` (a flow saved before has no `<field>Type`:
 * its text, `${VAR}` included, is used as before).
 */
export const ENV_FIELDS = ['url', 'host', 'managementUrl'] as const;

/**
 * A broker definition with its `env` fields (and whole-field `${NAME}` texts, which Node-RED resolves
 * only at deploy) replaced by the variables' values. `lookup` reads a variable as Node-RED does (flow,
 * group and process env); an unset or empty one gives the reference `${NAME}`, which the settings
 * report as a variable that is not set.
 */
export function resolveEnvFields(def: Record<string, unknown>, lookup: (name: string) => unknown): Record<string, unknown> {
  const out = { ...def };
  for (const field of ENV_FIELDS) {
    const given = def[field];
    const raw = typeof given === 'string' ? given.trim() : '';
    const name = def[`${field}Type`] === 'env' ? raw.replace(/^\$\{(.*)\}$/, '$1') : isEnvReference(raw) ? raw.slice(2, -1) : undefined;
    if (name === undefined || name === '') continue;
    const value = lookup(name);
    out[field] = typeof value === 'string' && value.trim() !== '' ? value.trim() : `\${${name}}`;
  }
  return out;
}

/**
 * A URL-like text with anything that may be a password removed, whatever its shape: everything
 * between `//` and the LAST `@` (a password may hold an unencoded `@` or `/`), and, with no `@`,
 * whatever follows a `:` in the authority unless it is a port number.
 */
export function redactUrl(raw: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*:\/\/)(.*)$/is.exec(raw);
  if (!scheme) return raw.includes('@') ? '***' : raw;
  const [, prefix, rest] = scheme as unknown as [string, string, string];
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const userInfo = rest.slice(0, at);
    const colon = userInfo.indexOf(':');
    const user = colon >= 0 ? userInfo.slice(0, colon) : userInfo;
    // A user name with a '/' is a sign of a broken split: show nothing of it.
    const shown = /[/?#]/.test(user) ? '***' : colon >= 0 ? `${user}:***` : user;
    return `${prefix}${shown}@${rest.slice(at + 1)}`;
  }
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const colon = authority.indexOf(':');
  // host:port, or a list of them (redis+sentinel://s1:26379,s2:26379): nothing to hide.
  if (authority.split(',').every((host) => /^(\[[0-9a-f:.]*\]|[^:]*)(:\d*)?$/i.test(host))) return raw;
  if (colon >= 0) return `${prefix}${authority.slice(0, colon)}:***${authorityEnd < 0 ? '' : rest.slice(authorityEnd)}`;
  return raw;
}

/** Splits a list of URLs or hosts: commas and whitespace separate. */
function splitList(value: string): string[] {
  return value
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function parseAmqpUrl(raw: string): URL {
  const unresolved = /\$\{([^}]*)\}/.exec(raw);
  if (unresolved) {
    throw new Error(`broker URL '${redactUrl(raw)}': environment variable ${unresolved[1]} is not set (Node-RED replaces \${VAR} only when it is the whole field)`);
  }
  let url: URL;
  try {
    url = new URL(raw);
    // An '@' after the host means a user name or password with an unencoded '/': the "vhost" would hold the password.
    if (/[@]/.test(url.pathname + url.search + url.hash)) throw new Error('user info in the path');
  } catch {
    throw new Error(`broker URL '${redactUrl(raw)}' is not a valid URL (in a user name or password, write / : @ % as %2F %3A %40 %25)`);
  }
  if (url.protocol !== 'amqp:' && url.protocol !== 'amqps:') {
    throw new Error(`broker URL must start with amqp:// or amqps://, not ${url.protocol}//`);
  }
  if (url.hostname === '') throw new Error(`broker URL '${redactUrl(raw)}' has no host`);
  return url;
}

function hostUrl(entry: string, settings: BrokerSettings): URL {
  const scheme = settings.tls ? 'amqps' : 'amqp';
  let url: URL;
  try {
    // host, host:port, [v6]:port; the port field is the default.
    url = new URL(`${scheme}://${entry}`);
  } catch {
    throw new Error(`broker host '${entry}' is not a host name or host:port`);
  }
  if (url.username !== '' || url.pathname !== '' || url.search !== '') throw new Error(`broker host '${redactUrl(`${scheme}://${entry}`).slice(scheme.length + 3)}' is not a host name or host:port`);
  if (url.port === '') url.port = String(settings.port || (settings.tls ? 5671 : 5672));
  // The default vhost '/' is the empty path; any other is one percent-encoded path segment.
  url.pathname = settings.vhost && settings.vhost !== '/' ? `/${encodeURIComponent(settings.vhost)}` : '';
  return url;
}

function toTarget(url: URL, settings: BrokerSettings): ConnectTarget {
  if (url.username === '' && settings.username) {
    url.username = encodeURIComponent(settings.username);
    url.password = encodeURIComponent(settings.password ?? '');
  }
  if (settings.heartbeat >= 0 && !url.searchParams.has('heartbeat')) url.searchParams.set('heartbeat', String(settings.heartbeat));
  const tls = url.protocol === 'amqps:';
  const display = new URL(url.toString());
  display.password = '';
  return {
    url: url.toString(),
    display: display.toString().replace(/\?.*$/, ''),
    address: `${url.hostname}:${url.port || (tls ? 5671 : 5672)}`,
    vhost: decodeURIComponent(url.pathname.replace(/^\//, '')) || '/',
    user: decodeURIComponent(url.username) || 'guest',
    tls,
  };
}

/** Every broker to try, in order (one, or the nodes of a cluster); throws a message a user can act on. */
export function resolveConnectTargets(settings: BrokerSettings): ConnectTarget[] {
  const raw = settings.url.trim();
  if (raw !== '' && !isUnresolvedEnv(raw)) return splitList(raw).map((u) => toTarget(parseAmqpUrl(u), settings));
  const unsetHost = isUnresolvedEnv(settings.host) ? settings.host.trim().slice(2, -1) : undefined;
  if (unsetHost !== undefined) throw new Error(`broker host: environment variable ${unsetHost} is not set`);
  const hosts = splitList(settings.host);
  if (hosts.length === 0) {
    throw new Error(raw === '' ? 'broker host is empty' : `environment variable ${raw.slice(2, -1)} is not set and no host is given`);
  }
  return hosts.map((h) => toTarget(hostUrl(h, settings), settings));
}
