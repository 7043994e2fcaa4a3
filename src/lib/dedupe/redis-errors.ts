/**
 * The Redis store's errors in one wording, whatever the client says. The same outage reaches a
 * process as the connection's own error (`connect ECONNREFUSED …`), as a command refused while
 * offline (`Stream isn't writeable …`, `Connection is closed.`) or as a command cut off in flight
 * (`Reached the max retries per request limit (which is 0)…`): each reads `<store> cannot be reached
 * (<why>)`, the why from a few words, the client's text never. Pure.
 */
import { DedupeStoreError } from './store';

/** Why a Redis server cannot be reached, in a few words; undefined when the error is not about reaching it. */
export function unreachableWhy(err: Error): string | undefined {
  const code = (err as { code?: unknown }).code;
  const text = `${typeof code === 'string' ? code : ''} ${err.message}`;
  // Sentinel and Cluster: the client's own summary first (its last error may follow).
  if (/All sentinels are unreachable/.test(text) && !/No such master/i.test(text)) return 'no sentinel answers';
  if (/None of startup nodes is available|Failed to refresh slots cache/.test(text)) return 'no cluster node answers';
  if (/CLUSTERDOWN/.test(text)) return 'the cluster is down';
  if (/ECONNREFUSED/.test(text)) return 'connection refused';
  if (/ENOTFOUND|EAI_AGAIN/.test(text)) return 'host not found';
  if (/EHOSTUNREACH|ENETUNREACH/.test(text)) return 'host unreachable';
  if (/ETIMEDOUT|timed? ?out/i.test(text)) return 'no answer in time';
  if (/^\s*LOADING\b|\bLOADING Redis/.test(text)) return 'loading its data after a restart';
  if (/ECONNRESET|EPIPE|writeable|Connection is closed|enableOfflineQueue|max retries per request/i.test(text)) return 'connection lost';
  return undefined;
}

/** Whether an error only says the command was not sent or was cut off (the connection's own error says more). */
function offline(err: Error): boolean {
  return /writeable|Connection is closed|enableOfflineQueue|max retries per request/i.test(err.message);
}

/**
 * The error a store call rejects with. `connectionError`: the connection's last error, which says
 * why better than a command refused offline.
 */
export function redisStoreError(description: string, err: unknown, connectionError?: Error): DedupeStoreError {
  let cause = err instanceof Error ? err : new Error(String(err));
  if (offline(cause) && connectionError) cause = connectionError;
  const text = cause.message;
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(text)) {
    return new DedupeStoreError(`${description} refused the login: ${text} (check the user and the password)`, 'auth');
  }
  if (/No such master with that name/i.test(text)) {
    return new DedupeStoreError(`${description}: the sentinels know no master of that name (check the name after the hosts in the URL)`, 'other');
  }
  const why = unreachableWhy(cause);
  if (why !== undefined) return new DedupeStoreError(`${description} cannot be reached (${why})`, 'unreachable');
  return new DedupeStoreError(`${description}: ${text}`, 'other');
}
