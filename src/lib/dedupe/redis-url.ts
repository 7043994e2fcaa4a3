/** A Redis URL: whether it can be used, and how it is named without credentials. Pure (the editor checks with it too). */

/** Names a Redis server without credentials: `redis 10.0.0.5:6379/0`. */
export function describeRedis(url: string): string {
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
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'Redis URL is not a URL: write redis://host:6379';
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') return `Redis URL must start with redis:// or rediss://, not ${u.protocol}//`;
  if (u.pathname.length > 1 && !/^\/\d+$/.test(u.pathname)) return `Redis URL path must be a database number (/0), not ${u.pathname}`;
  return undefined;
}
