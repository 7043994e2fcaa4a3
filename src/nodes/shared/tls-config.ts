/** The core `tls-config` node as the broker, PostgreSQL and Redis store nodes use it, the way the core mqtt-broker node does. */
import type { ConnectTarget } from '../../lib/connection';
import type { Node, NodeAPI } from './node-red';

/** What the core `tls-config` node offers (node-red/nodes/core/network/05-tls.js), as mqtt-broker uses it. */
export interface TlsConfigNode extends Node {
  /** false when its certificate / key files could not be read (it logged why). */
  valid?: boolean;
  addTLSOptions(options: Record<string, unknown>): Record<string, unknown>;
}

/** The selected tls-config node; throws (saying why) when it does not exist or cannot be used. */
export function usableTlsConfig(RED: NodeAPI, tlsId: string): TlsConfigNode {
  const tlsNode = RED.nodes.getNode(tlsId) as TlsConfigNode | null;
  if (!tlsNode || typeof tlsNode.addTLSOptions !== 'function') throw new Error('the selected TLS configuration does not exist (deleted or not deployed)');
  if (tlsNode.valid === false) throw new Error(`TLS configuration '${tlsNode.name || tlsNode.id}' cannot be used: its certificate, key or CA file could not be read (see the log)`);
  return tlsNode;
}

/** The socket options of the selected tls-config node; throws when it cannot be used. */
export function tlsSocketOptions(RED: NodeAPI, tlsId: string, targets: ConnectTarget[]): Record<string, unknown> | undefined {
  if (tlsId === '') return undefined;
  const tlsNode = usableTlsConfig(RED, tlsId);
  const plain = targets.find((t) => !t.tls);
  // A CA and client certificate with a plain amqp:// URL would send the password unencrypted: refuse.
  if (plain) throw new Error(`a TLS configuration is selected but ${plain.display} is not TLS: use amqps://`);
  return tlsNode.addTLSOptions({});
}
