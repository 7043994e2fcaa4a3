/**
 * At deploy, a retry-config on a broker that is a cluster of several nodes warns about the classic
 * main (every partition) and parking queues it declares (issue 53): each lives on one node, and a node
 * lost with its disk loses its messages. The cluster's nodes come from the management API (`/api/nodes`);
 * without an API, or when it does not answer, nothing is said (the dialog's check and the docs say it).
 */
import { findClassicOnCluster, type ClusterReader, type RetryTopologyConfig } from '../../lib/topology';
import type { Translate } from '../shared/i18n';

/** The warning's text, or undefined when the configuration's queues are replicated or the broker is one node. */
export async function classicOnClusterWarning(t: Translate, name: string, topology: RetryTopologyConfig, reader: ClusterReader): Promise<string | undefined> {
  const found = await findClassicOnCluster(topology, reader);
  if (!found) return undefined;
  return t('retry-config.warn.classicOnCluster', { name, size: found.nodes.length, nodes: found.nodes.join(', '), queues: found.queues.join(', ') });
}

/** Warns on the node once, when it applies; a management API that does not answer is no warning. */
export function warnClassicOnCluster(node: { warn(text: string): void }, t: Translate, name: string, topology: RetryTopologyConfig, reader: ClusterReader | undefined): Promise<void> {
  if (!reader || topology.mode === 'check') return Promise.resolve();
  return classicOnClusterWarning(t, name, topology, reader).then(
    (text) => {
      if (text !== undefined) node.warn(text);
    },
    () => undefined,
  );
}
