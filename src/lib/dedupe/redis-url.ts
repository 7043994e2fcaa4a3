/**
 * A Redis URL: which servers it names, whether it can be used, and how it is named without
 * credentials. Pure (the editor checks with it too). Three shapes:
 * - `redis://host:6379/0`, `rediss://…` (TLS): one server, as before;
 * - `redis+sentinel://host:26379,host:26380/mymaster[/db]`: the sentinels to ask, then the master's name;
 * - `redis+cluster://host:6379,host:6380`: a few nodes of a Redis Cluster (the rest are found).
 * In the multi-host shapes a `user:password@` before the hosts is the data servers' login (the
 * sentinels are asked without one); the Username / Password fields, when set, win over it.
 */

export interface RedisAddress {
  host: string;
  port: number;
}

export type RedisTarget =
  | { mode: 'single'; url: string }
  | { mode: 'sentinel'; sentinels: RedisAddress[]; name: string; db: number; username?: string; password?: string }
  | { mode: 'cluster'; nodes: RedisAddress[]; username?: string; password?: string };

const SENTINEL = 'redis+sentinel:';
const CLUSTER = 'redis+cluster:';

/** The servers a Redis URL names, or why it cannot be used. Pure. */
export function parseRedisUrl(url: string): RedisTarget | { problem: string } {
  const scheme = /^([a-z][a-z0-9+.-]*:)\/\/(.*)$/is.exec(url.trim());
  const protocol = scheme?.[1]?.toLowerCase();
  if (protocol === SENTINEL || protocol === CLUSTER) return parseMultiHost(protocol, scheme?.[2] ?? '');
  if (protocol === 'rediss+sentinel:' || protocol === 'rediss+cluster:') return { problem: `Redis URL: TLS (${protocol}//) is not supported with Sentinel or Cluster yet: use ${protocol.replace('rediss', 'redis')}// on a trusted network, or one server with rediss://` };
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { problem: 'Redis URL is not a URL: write redis://host:6379' };
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') return { problem: `Redis URL must start with redis://, rediss://, redis+sentinel:// or redis+cluster://, not ${u.protocol}//` };
  if (u.pathname.length > 1 && !/^\/\d+$/.test(u.pathname)) return { problem: `Redis URL path must be a database number (/0), not ${u.pathname}` };
  return { mode: 'single', url };
}

function parseMultiHost(protocol: string, rest: string): RedisTarget | { problem: string } {
  const sentinel = protocol === SENTINEL;
  const defaultPort = sentinel ? 26379 : 6379;
  const example = sentinel ? 'redis+sentinel://host:26379,host:26380/mymaster' : 'redis+cluster://host:6379,host:6380';
  const at = rest.lastIndexOf('@');
  const userInfo = at >= 0 ? rest.slice(0, at) : undefined;
  const afterAt = at >= 0 ? rest.slice(at + 1) : rest;
  const slash = afterAt.search(/[/?#]/);
  const hostList = slash < 0 ? afterAt : afterAt.slice(0, slash);
  const tail = slash < 0 ? '' : afterAt.slice(slash);
  if (/[?#]/.test(tail)) return { problem: `Redis URL takes no ?options or #fragment in ${protocol}// URLs: write ${example}` };
  const addresses: RedisAddress[] = [];
  for (const item of hostList.split(',')) {
    const address = parseAddress(item.trim(), defaultPort);
    if (!address) return { problem: `Redis URL: '${item}' is not host or host:port (write ${example})` };
    addresses.push(address);
  }
  const credentials = userInfo === undefined ? {} : parseUserInfo(userInfo);
  const path = tail.split('/').slice(1);
  if (sentinel) {
    const [name = '', db = '', ...extra] = path;
    if (name === '') return { problem: `Redis URL must name the master after the sentinels: ${example}` };
    if (extra.length > 0 || (db !== '' && !/^\d+$/.test(db))) return { problem: `Redis URL path must be /masterName or /masterName/db (a database number), not ${tail}` };
    return { mode: 'sentinel', sentinels: addresses, name: decodeURIComponent(name), db: db === '' ? 0 : Number(db), ...credentials };
  }
  if (path.some((part) => part !== '')) return { problem: `Redis URL: a cluster has no databases or names in its path (${tail}): write ${example}` };
  return { mode: 'cluster', nodes: addresses, ...credentials };
}

function parseAddress(text: string, defaultPort: number): RedisAddress | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d{1,5}))?$/i.exec(text);
  if (!m) return undefined;
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  const host = (m[1] as string).replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

function parseUserInfo(text: string): { username?: string; password?: string } {
  const colon = text.indexOf(':');
  const decode = (part: string): string => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  const username = decode(colon < 0 ? text : text.slice(0, colon));
  const password = colon < 0 ? undefined : decode(text.slice(colon + 1));
  return { ...(username ? { username } : {}), ...(password ? { password } : {}) };
}

/**
 * Names a Redis store without credentials: `redis 10.0.0.5:6379/0`, `redis sentinel mymaster
 * (10.0.0.5:26379,10.0.0.6:26379)`, `redis cluster 10.0.0.5:6379,10.0.0.6:6379`.
 */
export function describeRedis(url: string): string {
  const target = parseRedisUrl(url);
  const list = (addresses: RedisAddress[]): string => addresses.map((a) => `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`).join(',');
  if ('mode' in target && target.mode === 'sentinel') return `redis sentinel ${target.name}${target.db ? `/${target.db}` : ''} (${list(target.sentinels)})`;
  if ('mode' in target && target.mode === 'cluster') return `redis cluster ${list(target.nodes)}`;
  try {
    const u = new URL(url);
    const db = u.pathname.length > 1 ? u.pathname : '';
    return `${u.protocol === 'rediss:' ? 'rediss' : 'redis'} ${u.hostname || '127.0.0.1'}:${u.port || '6379'}${db}`;
  } catch {
    return 'redis (unparsable URL)';
  }
}

/** Why a Redis URL cannot be used, or undefined. Pure. */
export function redisUrlProblem(url: string): string | undefined {
  const target = parseRedisUrl(url);
  return 'problem' in target ? target.problem : undefined;
}

/**
 * Why a key prefix cannot be used with a Redis URL, or undefined. In a cluster the store makes the
 * scope each key's hash tag (`<prefix>{<scope>}:<key>`); a brace in the prefix would make the tag
 * something else. Pure.
 */
export function redisPrefixProblem(url: string, prefix: string): string | undefined {
  const target = parseRedisUrl(url);
  if ('mode' in target && target.mode === 'cluster' && /[{}]/.test(prefix)) return `Key prefix '${prefix}' has a { or }: in a cluster the store tags each key by its scope in braces; remove them`;
  return undefined;
}
