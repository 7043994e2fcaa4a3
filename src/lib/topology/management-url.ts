/**
 * Which management API a broker's check mode reads, from the broker's optional `managementUrl`. Pure.
 *
 * - empty: none (check mode says its arguments were not compared);
 * - a `${VAR}` whose variable is not set (an example imported as it is): not an error, the API at
 *   the broker's own host on RabbitMQ's default port is tried, and used only if it answers;
 * - anything else: that URL (one that cannot be used stays an error of the broker's configuration).
 */
import { isUnresolvedEnv, type ConnectTarget } from '../connection';

export type ManagementChoice =
  | { kind: 'none' }
  | { kind: 'given'; url: string }
  /** `note` says once why the default is tried; `optional`: a default that does not answer is not an error. */
  | { kind: 'default'; url: string; note: string; optional: true };

/** RabbitMQ's management plugin listens on 15672 (15671 with TLS) by default. */
export function defaultManagementUrl(target: ConnectTarget): string {
  const host = new URL(target.url).hostname || 'localhost';
  return target.tls ? `https://${host}:15671` : `http://${host}:15672`;
}

export function chooseManagementApi(managementUrl: string, target: ConnectTarget | undefined): ManagementChoice {
  const given = managementUrl.trim();
  if (given === '') return { kind: 'none' };
  if (!isUnresolvedEnv(given)) return { kind: 'given', url: given };
  if (!target) return { kind: 'none' };
  const url = defaultManagementUrl(target);
  return {
    kind: 'default',
    url,
    optional: true,
    note: `management API URL ${given}: environment variable not set; trying the broker's own at ${url} (arguments are compared if it answers)`,
  };
}
