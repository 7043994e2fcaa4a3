import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_NODE_TYPES, NODE_TYPES, isNodeType } from '../../../../src/nodes/shared/node-types';

describe('the node types, named once (src/nodes/shared/node-types.ts)', function () {
  it("are package.json's node-red.nodes, in its order", function () {
    const pkg = JSON.parse(readFileSync(path.resolve(__dirname, '../../../../package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } };
    assert.deepEqual([...NODE_TYPES], Object.keys(pkg['node-red'].nodes));
  });
  it('config node types are node types', function () {
    for (const type of CONFIG_NODE_TYPES) assert.ok(isNodeType(type), type);
    assert.equal(isNodeType('retry-nothing'), false);
    assert.equal(isNodeType(42), false);
  });
});
