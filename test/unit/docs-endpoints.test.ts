/**
 * docs/security.md's table of admin endpoints is the package's: every route the nodes register on
 * Node-RED's admin API (RED.httpAdmin), with the permission it asks, is a row, and every row is a
 * route. The routes are read from the node modules package.json names, registered on a fake RED
 * that records them, so a new endpoint cannot go undocumented.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AdminHandler, NodeAPI } from '../../src/nodes/shared/node-red';
import { codeSpans, tableRows } from '../helpers/markdown-tables';

const ROOT = path.resolve(__dirname, '../..');
const NODE_MODULES = Object.values((JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } })['node-red'].nodes);

/** A route as `METHOD path permission`, its parameters (`:config`, `<config id>`) as `<>`. */
const route = (method: string, where: string, permission: string): string => `${method} ${where.replace(/:[A-Za-z]+|<[^>]+>/g, '<>')} ${permission}`;

/** Every admin route the package's nodes register, with its permission, as Node-RED loads them. */
function registeredRoutes(): string[] {
  const routes: string[] = [];
  const permissions = new WeakMap<AdminHandler, string>();
  const record = (method: string) => (where: string, ...handlers: AdminHandler[]): void => {
    const permission = handlers.map((handler) => permissions.get(handler)).find((p) => p !== undefined);
    routes.push(route(method, where, permission ?? '(none)'));
  };
  const RED = {
    httpAdmin: { get: record('GET'), post: record('POST') },
    auth: {
      needsPermission: (permission: string): AdminHandler => {
        const handler: AdminHandler = (_req, _res, next) => next();
        permissions.set(handler, permission);
        return handler;
      },
    },
    nodes: { registerType: () => undefined, createNode: () => undefined, getNode: () => null, eachNode: () => undefined, getCredentials: () => undefined },
    log: { warn: () => undefined, info: () => undefined },
    _: (key: string) => key,
    settings: {},
  } as unknown as NodeAPI;
  for (const file of NODE_MODULES) {
    const source = path.join(ROOT, file.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts'));
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a node module as Node-RED loads it: `module.exports = function (RED)`
    const register = require(source) as (red: NodeAPI) => void;
    register(RED);
  }
  return routes.sort();
}

/**
 * The routes of docs/security.md's table: each code span of an endpoint cell that starts with a
 * method or `…/` (the previous path up to the part named, or without its last part), its query left out.
 */
function documentedRoutes(): string[] {
  const page = readFileSync(path.join(ROOT, 'docs/security.md'), 'utf8');
  const routes: string[] = [];
  let method = '';
  let previous = '';
  for (const [endpoint = '', permission = ''] of tableRows(page, /^\|\s*endpoint\s*\|\s*permission\s*\|/, /Admin endpoints/)) {
    const needs = codeSpans(permission)[0] ?? '(none)';
    for (const span of codeSpans(endpoint)) {
      const match = /^(?:(GET|POST) )?((?:\/|…\/).*)$/.exec(span);
      if (!match) continue;
      method = match[1] ?? method;
      let where = (match[2] ?? '').replace(/\?.*$/, '');
      if (where.startsWith('…/')) {
        const rest = where.slice(2);
        const parts = previous.split('/');
        const at = parts.indexOf(rest.split('/')[0] ?? '');
        where = `${parts.slice(0, at >= 0 ? at : -1).join('/')}/${rest}`;
      }
      previous = where;
      routes.push(route(method, where, needs));
    }
  }
  return routes.sort();
}

describe('docs/security.md lists the admin endpoints the package registers', function () {
  it('reads the table: a method, a path, `…/` for the previous path, the first permission', function () {
    const routes = documentedRoutes();
    assert.ok(routes.includes('POST /rabbitmq-retry/parking/<>/purge rabbitmq-retry.write'), routes.join('\n'));
    assert.ok(routes.includes('GET /rabbitmq-retry/parking/<>/jobs/<> rabbitmq-retry.read'), routes.join('\n'));
  });

  it('has one row for each route, with the permission the route asks', function () {
    assert.deepEqual(documentedRoutes(), registeredRoutes());
  });
});
