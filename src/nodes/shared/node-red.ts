/**
 * The small part of Node-RED's runtime API these nodes use, typed here instead of pulling in
 * the outdated community typings.
 */

export interface NodeMessage {
  _msgid?: string;
  payload?: unknown;
  topic?: string;
  [key: string]: unknown;
}

export interface NodeStatus {
  fill?: 'red' | 'green' | 'yellow' | 'blue' | 'grey';
  shape?: 'ring' | 'dot';
  text?: string;
}

export type SendFunction = (msg: NodeMessage | Array<NodeMessage | null> | null) => void;
export type DoneFunction = (err?: Error) => void;

export interface NodeDef {
  id: string;
  type: string;
  name?: string;
  z?: string;
  [key: string]: unknown;
}

export interface Node {
  id: string;
  type: string;
  name?: string;
  credentials?: Record<string, string | undefined>;
  /** The ids of the nodes each output is wired to. */
  wires?: unknown;
  on(event: 'input', listener: (msg: NodeMessage, send: SendFunction, done: DoneFunction) => void): void;
  on(event: 'close', listener: (removed: boolean, done: () => void) => void): void;
  send(msg: NodeMessage | Array<NodeMessage | null> | null): void;
  status(status: NodeStatus | Record<string, never>): void;
  log(text: string): void;
  warn(text: string | object): void;
  error(text: string | Error, msg?: NodeMessage): void;
}

export interface CredentialsDefinition {
  [key: string]: { type: 'text' | 'password' };
}

/** The part of an Express request and response the admin endpoints use. */
export interface AdminRequest {
  body: unknown;
  params: Record<string, string | undefined>;
  /** The URL's query, as express parses it. */
  query?: Record<string, unknown>;
  /** The logged-in user under adminAuth (none without it). */
  user?: { username?: string };
  /** Express's: the path and the client's address, which Node-RED's audit log writes. */
  path?: string;
  ip?: string;
}
export interface AdminResponse {
  status(code: number): AdminResponse;
  json(body: unknown): void;
  set(field: string, value: string): AdminResponse;
  send(body: string): void;
}
export type AdminHandler = (req: AdminRequest, res: AdminResponse, next: () => void) => void;

export interface NodeAPI {
  httpAdmin: {
    get(path: string, ...handlers: AdminHandler[]): void;
    post(path: string, ...handlers: AdminHandler[]): void;
  };
  auth: { needsPermission(permission: string): AdminHandler };
  nodes: {
    createNode(node: Node, def: NodeDef): void;
    registerType(
      type: string,
      constructor: (this: Node, def: NodeDef) => void,
      options?: { credentials?: CredentialsDefinition; settings?: Record<string, unknown> },
    ): void;
    getNode(id: string): Node | null;
    /** Every node definition of the deployed flows (definitions, not instances: getNode gives the instance). */
    eachNode(callback: (def: NodeDef) => void): void;
    /** The stored credentials of a deployed node, undefined for a node never deployed. */
    getCredentials(id: string): Record<string, string | undefined> | undefined;
  };
  log: { warn(text: string): void; info(text: string): void };
  /** Node-RED's property evaluation; the `env` type reads flow, group and process env like the core nodes. */
  util: {
    evaluateNodeProperty(value: string, type: 'env', node: Node | null): unknown;
    getMessageProperty(msg: NodeMessage, path: string): unknown;
    /** Throws when the expression does not parse. */
    prepareJSONataExpression(expression: string, node: Node): unknown;
    evaluateJSONataExpression(expression: unknown, msg: NodeMessage, callback: (err: Error | null, value: unknown) => void): void;
  };
  _(key: string, substitutions?: Record<string, unknown>): string;
  /** settings.js's properties, as the runtime read them. */
  settings?: Record<string, unknown>;
}

export function stringProp(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value.trim() : fallback;
}

/** A plain object as a record; anything else (an array, a primitive, null) as an empty one. */
export function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Text of `msg.error` as a Catch node or a function node leaves it: a string, or `{ message }`. */
export function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error instanceof Error) return error.message;
  if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
    return (error as { message: string }).message;
  }
  return '';
}

/**
 * Whether every node a msg sent on `wires` can reach, following the wires, is still running. Node-RED
 * forgets the nodes of a deploy all at once as it starts stopping them, and drops a msg sent to one it
 * forgot: a full deploy, or one that restarts the flow's nodes, leaves no way to settle a msg in flight.
 */
export function downstreamRunning(RED: NodeAPI, wires: unknown): boolean {
  const seen = new Set<string>();
  const next = wiredIds(wires);
  for (let id = next.pop(); id !== undefined; id = next.pop()) {
    if (seen.has(id)) continue;
    seen.add(id);
    const node = RED.nodes.getNode(id);
    if (!node) return false;
    next.push(...wiredIds(node.wires));
  }
  return true;
}

function wiredIds(wires: unknown): string[] {
  return Array.isArray(wires) ? wires.flat().filter((id): id is string => typeof id === 'string') : [];
}
