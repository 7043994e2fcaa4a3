/**
 * retry-config's settings read from its saved definition: its broker, its topology (tables in
 * shared/config-properties.ts and shared/topology-definition.ts, which the nodes that use a retry-config read too), its
 * error rules and the name it goes by. The runtime reads its flow with them. Pure: the editor can run it too.
 */
import type { RetryTopologyConfig } from '../../lib/topology/plan';
import { stringProp } from '../shared/node-red';
import { topologyFromDefinition } from '../shared/topology-definition';

export interface RetryConfigProperties {
  /** The retry-broker node's id ('' for none). */
  broker: string;
  /** Its topology; undefined when the definition's cannot be used (one of `problems`). */
  topology: RetryTopologyConfig | undefined;
  /** Its error rules as saved (JSON text or a list): the classifier reads them, and says what is wrong. */
  errorRules: unknown;
  /** The name it goes by in messages: its name, else its main queue ('' for neither). */
  label: string;
  /** What is wrong with its topology. */
  problems: string[];
}

export function retryConfigProperties(def: Record<string, unknown>): RetryConfigProperties {
  const problems: string[] = [];
  let topology: RetryTopologyConfig | undefined;
  try {
    topology = topologyFromDefinition(def);
  } catch (err) {
    problems.push((err as Error).message);
  }
  return { broker: stringProp(def.broker), topology, errorRules: def.errorRules, label: stringProp(def.name) || stringProp(def.mainQueue), problems };
}
