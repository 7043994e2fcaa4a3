/** The converter's shapes: a flow's nodes as plain JSON, the report, credentials by node id. Pure. */

/** One node of a flows file (Node-RED's export format). */
export interface FlowNode {
  id: string;
  type: string;
  z?: string;
  name?: string;
  x?: number;
  y?: number;
  wires?: string[][];
  [field: string]: unknown;
}

/** Credentials by node id, as flows_cred.json (decrypted) holds them. */
export type FlowCredentials = Record<string, Record<string, string>>;

/** What happened to one node of the input (or was added for it). */
export interface ReportEntry {
  id: string;
  /** The node's type in the input (for an added node: the type added). */
  type: string;
  name: string;
  /** The package the node came from (or 'node-red-contrib-rabbitmq-retry' for added nodes). */
  package: string;
  outcome: 'converted' | 'kept' | 'added';
  /** The node types it became (converted) or was added as. */
  into: string[];
  /** Why it was kept, what changes in behaviour, what to do by hand. Never a credential. */
  notes: string[];
  /** An added node: the id of the input node it was added for. */
  for?: string;
}

/** An exchange an old node declared (the converted node only checks it, or publishes to it). */
export interface DeclaredExchange {
  name: string;
  type: string;
  durable: boolean;
  /** The broker node's id. */
  broker: string;
  /** The old node that declared it. */
  by: string;
}

/** An exchange the converted flow needs and never creates: where it goes and who needs it. */
export interface ExchangeToCreate {
  name: string;
  type: string;
  /** Whether the old flow declared it durable (a non-durable one is gone after a broker restart). */
  durable: boolean;
  /** The retry-broker's host and vhost ('' when no broker was selected). */
  host: string;
  vhost: string;
  /** The nodes that need it. */
  nodes: string[];
}

export interface ConvertOptions {
  /** Convert only these nodes (a selection or a tab's nodes); the config nodes they use follow. Default: all. */
  only?: ReadonlySet<string>;
  /** Credentials of the input (flows_cred.json, or a flows export with credentials), by node id. */
  credentials?: FlowCredentials;
  /**
   * Consumers that acked on arrival (noAck or auto-ack): also retry the msgs a node downstream throws
   * on, and ack when the flow's end completes, instead of acking on arrival (`ack-on-arrival`, default).
   */
  autoAck?: 'ack-on-arrival' | 'settle-at-end';
  /** The input's credentials were left out on purpose (the command's --no-credentials): the report says so, not that there were none. */
  credentialsLeftOut?: boolean;
}

export interface ConvertResult {
  flows: FlowNode[];
  report: ReportEntry[];
  /** Credentials of the converted nodes, by id (user / password of each retry-broker). */
  credentials: FlowCredentials;
  /** Exchanges the old nodes declared that the converted ones expect to exist (check mode never creates them). */
  exchanges: ExchangeToCreate[];
}
