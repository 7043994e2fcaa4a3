/**
 * The Flow Library (flows.nodered.org) and its scorecard (`node-red-dev validate`) find a package's
 * node types by parsing each node's .html, never by running it: the built .html files (dist/: `npm
 * run build` first; `npm test` builds before mocha) carry every type's definition in the form they
 * read, generated from the dialogs (src/editor/library-definition.ts, scripts/build-editor.mjs).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import ts from 'typescript';
import { catalogTranslator, libraryDefinition, literal, registrationScript, type LibraryDefinition } from '../../src/editor/library-definition';
import { DIALOGS } from '../../src/editor';

const ROOT = path.resolve(__dirname, '../..');
const NODES = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } })['node-red'].nodes;

interface ParsedType {
  category?: unknown;
  color?: unknown;
  icon?: unknown;
  inputs?: unknown;
  outputs?: unknown;
  defaults?: Record<string, object>;
  credentials?: Array<string | undefined>;
}

/** What acorn calls a Literal: a string, number, regular expression, true, false or null (a template is not one). */
function literalValue(node: ts.Node): { value: unknown } | undefined {
  if (ts.isStringLiteral(node)) return { value: node.text };
  if (ts.isNumericLiteral(node)) return { value: Number(node.text) };
  if (ts.isRegularExpressionLiteral(node)) return { value: node.text };
  if (node.kind === ts.SyntaxKind.TrueKeyword) return { value: true };
  if (node.kind === ts.SyntaxKind.FalseKeyword) return { value: false };
  if (node.kind === ts.SyntaxKind.NullKeyword) return { value: null };
  return undefined;
}

/** acorn's `Property.key.name`: an identifier's name, else undefined; a spread has no key, and reading it throws. */
function keyName(property: ts.ObjectLiteralElementLike): string | undefined {
  if (ts.isSpreadAssignment(property)) throw new TypeError("Cannot read properties of undefined (reading 'name')");
  return ts.isIdentifier(property.name) ? property.name.text : undefined;
}

/** acorn's `Property.value.properties`: an object literal's properties, else undefined. */
function propertiesOf(property: ts.ObjectLiteralElementLike): ts.NodeArray<ts.ObjectLiteralElementLike> | undefined {
  return ts.isPropertyAssignment(property) && ts.isObjectLiteralExpression(property.initializer) ? property.initializer.properties : undefined;
}

/**
 * The Flow Library's reading of one node .html, step by step as getNodeDefinitions does it in
 * node-red-dev (src/libs/checknodes.js, v0.1.6; the same function is in node-red/flow-library,
 * lib/modules.js): every <script type="text/javascript"> block by the same regular expression, parsed
 * as a script (acorn there, TypeScript's parser here, a syntax error failing the file), and in it each
 * call `….registerType(<literal type>, {…})`: the names in `defaults`, the names in `credentials`, and
 * category, color, icon, inputs and outputs when they are literals. Anything else is an error the
 * library records; a file without a type is one the scorecard reports as "Unable to parse".
 */
function flowLibraryTypes(file: string): { defs: Record<string, ParsedType>; errors: string[] } {
  const regExp = /<script.+?type=['"]text\/javascript['"].*?>([\S\s]*?)<\/script>/gi;
  const content = readFileSync(file, 'utf8');
  const parts = [...content.matchAll(regExp)].map((match) => match[1] ?? '');
  if (parts.length === 0) throw new Error('No <script> sections found');
  const defs: Record<string, ParsedType> = {};
  const errors: string[] = [];
  for (const part of parts) {
    new vm.Script(part); // compiles without running: a syntax error throws, as acorn.parse does
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'registerType') {
        const [typeNode, defNode] = node.arguments;
        const type = typeNode && literalValue(typeNode);
        if (!type) errors.push('non-literal');
        else if (!defNode || !ts.isObjectLiteralExpression(defNode)) errors.push('non-objectexpression');
        else {
          const def: ParsedType = {};
          defs[String(type.value)] = def;
          for (const property of defNode.properties) {
            const name = keyName(property);
            if (name === 'defaults' || name === 'credentials') {
              const properties = propertiesOf(property);
              if (!properties) errors.push(`${name}-not-inline`);
              else if (name === 'defaults') def.defaults = Object.fromEntries(properties.map((p) => [keyName(p), {}]));
              else def.credentials = properties.map(keyName);
            } else if (name === 'icon' || name === 'color' || name === 'inputs' || name === 'outputs' || name === 'category') {
              const value = ts.isPropertyAssignment(property) ? literalValue(property.initializer) : undefined;
              if (value) def[name] = value.value;
              else errors.push(`${name}-not-inline`);
            }
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(ts.createSourceFile('script.js', part, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS));
  }
  if (Object.keys(defs).length === 0) throw new Error(errors.length > 0 ? `Syntax errors parsing <script>: ${errors.join(', ')}` : 'No type definitions found');
  return { defs, errors };
}

/** The node type's dialog, its static part in English, as the build writes it. */
function expected(type: string): LibraryDefinition {
  const dialog = DIALOGS[type];
  assert.ok(dialog, type);
  const catalog: unknown = JSON.parse(readFileSync(path.join(ROOT, 'src', 'nodes', type, 'locales', 'en-US', `${type}.json`), 'utf8'));
  return libraryDefinition(dialog(catalogTranslator(type, catalog)));
}

describe('the Flow Library reads every node type from its .html', function () {
  it('finds nothing in a .html that loads its dialog from resources/ alone (the sources)', function () {
    assert.throws(() => flowLibraryTypes(path.join(ROOT, 'src', 'nodes', 'retry-settle', 'retry-settle.html')), /No type definitions found/);
  });

  it('reads all thirteen types from the built .html files, each with its category, color, defaults, inputs, outputs and icon', function () {
    assert.ok(existsSync(path.join(ROOT, 'dist', 'nodes')), 'dist/ is missing: npm run build first');
    const found: string[] = [];
    for (const [type, file] of Object.entries(NODES)) {
      const htmlFile = path.join(ROOT, file.replace('.js', '.html'));
      const { defs, errors } = flowLibraryTypes(htmlFile);
      assert.deepEqual(errors, [], `${type}: parsed with errors`);
      assert.deepEqual(Object.keys(defs), [type], `${file}: its own type`);
      found.push(type);
      const parsed = defs[type] ?? {};
      const dialog = DIALOGS[type]?.((key) => key);
      assert.ok(dialog, type);
      assert.equal(parsed.category, dialog.category, `${type}: category`);
      assert.deepEqual(Object.keys(parsed.defaults ?? {}), Object.keys(dialog.defaults), `${type}: defaults`);
      assert.deepEqual(parsed.credentials, dialog.credentials ? Object.keys(dialog.credentials) : undefined, `${type}: credentials`);
      if (dialog.category === 'config') continue;
      assert.equal(parsed.color, '#FF9966', `${type}: color`);
      assert.equal(parsed.inputs, dialog.inputs, `${type}: inputs`);
      assert.equal(parsed.outputs, dialog.outputs, `${type}: outputs`);
      // The library uploads the icon it finds beside the node (icons/), else shows Node-RED's own.
      const icon = String(parsed.icon);
      const own = path.join(path.dirname(htmlFile), 'icons', icon);
      assert.ok(existsSync(own) || existsSync(path.join(ROOT, 'node_modules', '@node-red', 'nodes', 'icons', icon)), `${type}: icon ${icon}`);
    }
    assert.deepEqual(found, ['retry-broker', 'retry-config', 'retry-consumer', 'retry-settle', 'park-publisher', 'retry-publish', 'park-replay', 'retry-dedupe', 'retry-postgres', 'outbox-write', 'outbox-relay', 'retry-health', 'retry-console']);
  });

  it('writes each dialog’s own static part as the literal, in English, with the label of a new node', function () {
    for (const [type, file] of Object.entries(NODES)) {
      const html = readFileSync(path.join(ROOT, file.replace('.js', '.html')), 'utf8');
      const calls: unknown[][] = [];
      for (const [, script] of html.matchAll(/<script type="text\/javascript">([\s\S]*?)<\/script>/g)) {
        vm.runInNewContext(script ?? '', { RabbitmqRetry: { registerType: (...args: unknown[]) => calls.push(JSON.parse(JSON.stringify(args)) as unknown[]) } });
      }
      const definition = expected(type);
      assert.deepEqual(calls, [[type, definition]], type);
      assert.ok(definition.label, `${type}: label`);
      if (definition.category !== 'config') assert.ok(definition.paletteLabel, `${type}: palette label`);
    }
  });

  it('takes the icon and labels a new node shows, texts from the catalog', function () {
    const settle = expected('retry-settle');
    assert.equal(settle.icon, 'rabbitmq-retry-ack.svg', 'the icon of the default action, ack');
    assert.deepEqual(settle.defaults, { name: { value: '' }, action: { value: 'ack' }, reason: { value: '' }, bisect: { value: false } }, 'values only: no validators, no labels');
    assert.equal(settle.label, 'ack');
    assert.equal(expected('retry-broker').label, 'amqp://127.0.0.1:5672');
    assert.deepEqual(expected('retry-consumer').defaults.config, { value: '', type: 'retry-config', required: true });
    const t = catalogTranslator('x', { x: { a: { b: 'to __queue__' } } });
    assert.equal(t('a.b', { queue: 'orders' }), 'to orders');
    assert.throws(() => t('a.c'), /x: no text 'a.c'/);
  });

  it('writes plain values as a literal the parser reads: identifier keys, no text that ends the script', function () {
    assert.equal(literal({ name: { value: '' }, 'x-y': 1 }), '{\n    name: { value: "" },\n    "x-y": 1\n}');
    assert.equal(literal({ value: '</script>' }), '{ value: "\\u003c/script>" }');
    assert.throws(() => literal({ label: () => 'x' }), /not a plain value/);
    const script = registrationScript('t', { category: 'c', defaults: { a: { value: 1 } } });
    assert.equal(script, 'RabbitmqRetry.registerType("t", {\n    category: "c",\n    defaults: {\n        a: { value: 1 }\n    }\n});');
  });
});
