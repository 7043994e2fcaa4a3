/** Where and how to connect, from a broker configuration. Pure. */

export interface BrokerSettings {
  /** Full AMQP URL; empty, or an unresolved `${VAR}`, means: use host / port / vhost. */
  url: string;
  host: string;
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
}

const UNRESOLVED_ENV = /^\$\{[^}]*\}$/;

/** True when the value is a Node-RED `${VAR}` reference whose variable was not set. */
export function isUnresolvedEnv(value: string): boolean {
  return UNRESOLVED_ENV.test(value.trim());
}

export function resolveConnectTarget(settings: BrokerSettings): ConnectTarget {
  const raw = settings.url.trim();
  let url: URL;
  if (raw !== '' && !isUnresolvedEnv(raw)) {
    try {
      url = new URL(raw);
    } catch {
      throw new Error(`broker URL '${raw.replace(/\/\/[^@/]*@/, '//***@')}' is not a valid URL`);
    }
    if (url.protocol !== 'amqp:' && url.protocol !== 'amqps:') {
      throw new Error(`broker URL must start with amqp:// or amqps://, not ${url.protocol}//`);
    }
  } else {
    if (!settings.host) throw new Error('broker host is empty');
    url = new URL(`${settings.tls ? 'amqps' : 'amqp'}://placeholder`);
    url.hostname = settings.host;
    url.port = String(settings.port || (settings.tls ? 5671 : 5672));
    // The default vhost '/' is the empty path; any other is one percent-encoded path segment.
    url.pathname = settings.vhost && settings.vhost !== '/' ? `/${encodeURIComponent(settings.vhost)}` : '';
  }
  if (url.username === '' && settings.username) {
    url.username = encodeURIComponent(settings.username);
    url.password = encodeURIComponent(settings.password ?? '');
  }
  if (settings.heartbeat >= 0 && !url.searchParams.has('heartbeat')) url.searchParams.set('heartbeat', String(settings.heartbeat));
  const display = new URL(url.toString());
  display.password = '';
  return { url: url.toString(), display: display.toString().replace(/\?.*$/, '') };
}
