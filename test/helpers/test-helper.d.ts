declare module 'node-red-node-test-helper' {
  interface TestNode {
    id: string;
    type: string;
    receive(msg: Record<string, unknown>): void;
    on(event: string, listener: (...args: any[]) => void): void;
    [key: string]: unknown;
  }
  interface Helper {
    init(runtimePath: string, settings?: Record<string, unknown>): void;
    load(nodes: unknown[], flow: object[], credentials?: Record<string, Record<string, string>>): Promise<void>;
    unload(): Promise<void>;
    /** Deploys a changed flow the way the editor does: 'full', 'flows' (modified flows) or 'nodes' (modified nodes). */
    setFlows(flow: object[], type: 'full' | 'flows' | 'nodes', credentials?: Record<string, Record<string, string>>): Promise<void>;
    getNode(id: string): TestNode;
    /** settings.js properties for the next load (merged with the runtime's defaults); RED.settings has them. */
    settings(userSettings: Record<string, unknown>): Record<string, unknown>;
    startServer(): Promise<void>;
    stopServer(): Promise<void>;
    /** The spy on RED.log.log since the last load: every log line (args[0] is {level, id, type, msg}). */
    log(): { args: Array<[{ level: number; id?: string; msg: unknown }]> };
    /** supertest on the runtime's admin app (RED.httpAdmin). */
    request(): {
      post(path: string): { send(body: unknown): PromiseLike<{ status: number; text: string; headers: Record<string, string>; body: Record<string, any> }> };
      get(path: string): PromiseLike<{ status: number; text: string; headers: Record<string, string>; body: Record<string, any> }>;
    };
  }
  const helper: Helper;
  export default helper;
}
