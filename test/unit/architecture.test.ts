/**
 * The architecture, kept by a test: src/lib is in folders by concern, one above the other; a folder
 * imports only from the folders below it, through their index, never up and never in a circle; it
 * imports nothing of Node-RED and holds no node-type tables. The nodes reach src/lib through the
 * folders' indexes too (the editor's browser bundle takes single pure files instead). Above src/lib,
 * src/ is in parts top to bottom (the editor's composition root, node folders and the converter,
 * nodes/shared, the editor's toolkit): no arrow back up, no circle, nothing imports a root.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { NODE_TYPES as ALL_NODE_TYPES } from '../../src/nodes/shared/node-types';

const SRC = path.resolve(__dirname, '../../src');
const LIB = path.join(SRC, 'lib');

/** The floors, top to bottom (see src/lib/index.ts). */
export const FLOORS = ['health', 'consume', 'degrade', 'dedupe', 'outbox', 'settle', 'classify', 'parking', 'topology', 'connection', 'publish', 'postgres', 'message', 'observe', 'trace', 'rules', 'amqp', 'backoff', 'collections'];

/**
 * Modules bundled for the browser (they import single pure files, not indexes that pull in Node.js
 * APIs): src/editor, each node's dialog (src/nodes/<type>/editor.ts, editor-*.ts) and the pure modules they share.
 */
const BROWSER_SIDE = [path.join(SRC, 'editor'), ...nodeEditors(), ...nodeProperties(), path.join(SRC, 'nodes/shared/properties.ts'), path.join(SRC, 'nodes/shared/broker-properties.ts'), path.join(SRC, 'nodes/shared/config-properties.ts'), path.join(SRC, 'nodes/shared/topology-definition.ts'), path.join(SRC, 'nodes/shared/node-red.ts'), path.join(SRC, 'nodes/shared/node-types.ts')];

const NODE_TYPES = /['"`](retry-broker|retry-config|retry-consumer|retry-settle|retry-publish|park-publisher|park-replay|retry-dedupe|retry-postgres|outbox-write|outbox-relay|retry-health)['"`]/;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    return statSync(file).isDirectory() ? filesUnder(file) : file.endsWith('.ts') ? [file] : [];
  });
}

/** Each node type's property tables, which its dialog takes too: src/nodes/<type>/properties.ts. */
function nodeProperties(): string[] {
  return filesUnder(path.join(SRC, 'nodes')).filter((file) => path.basename(file) === 'properties.ts');
}

/** Each node type's dialog modules: src/nodes/<type>/editor.ts and its parts, editor-*.ts. */
function nodeEditors(): string[] {
  return filesUnder(path.join(SRC, 'nodes')).filter((file) => /^editor(-[\w-]+)?\.ts$/.test(path.basename(file)));
}

/** Relative module specifiers a file imports or re-exports, resolved to files (a folder to its index). */
function importsOf(file: string): Array<{ spec: string; target: string }> {
  const code = readFileSync(file, 'utf8');
  const specs = [...code.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s+'([^']+)'/g)].map((m) => m[1] ?? '');
  specs.push(...[...code.matchAll(/\b(?:require|import)\(\s*'([^']+)'\s*\)/g)].map((m) => m[1] ?? ''));
  return specs.map((spec) => {
    if (!spec.startsWith('.')) return { spec, target: spec };
    const base = path.resolve(path.dirname(file), spec);
    const target = [`${base}.ts`, path.join(base, 'index.ts')].find((candidate) => {
      try {
        return statSync(candidate).isFile();
      } catch {
        return false;
      }
    });
    return { spec, target: target ?? base };
  });
}

/** The lib folder a file is in ('' for src/lib/index.ts). */
function floorOf(file: string): string {
  const rel = path.relative(LIB, file);
  return rel.includes(path.sep) ? (rel.split(path.sep)[0] ?? '') : '';
}

/** Code without comments, for looking at what it does rather than what it says. */
function withoutComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const libFiles = filesUnder(LIB);

/** Every import circle among these files (each as `a -> b -> a`, paths relative to src). */
function circlesAmong(files: string[]): string[] {
  const graph = new Map(files.map((file) => [file, importsOf(file).map((i) => i.target).filter((t) => t.startsWith(SRC))]));
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, trail: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      circles.push([...trail.slice(trail.indexOf(file)), file].map((f) => path.relative(SRC, f)).join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
    state.set(file, 'done');
  };
  for (const file of files) visit(file, []);
  return circles;
}

describe('architecture of src/lib', function () {
  it('every folder is a known floor with a short index that names what it offers', function () {
    const folders = readdirSync(LIB).filter((entry) => statSync(path.join(LIB, entry)).isDirectory());
    for (const folder of folders) {
      assert.ok(FLOORS.includes(folder), `src/lib/${folder} is not one of the floors ${FLOORS.join(', ')} (add it to FLOORS and src/lib/index.ts)`);
      const index = path.join(LIB, folder, 'index.ts');
      const text = readFileSync(index, 'utf8');
      assert.match(text, new RegExp(`^/\\*\\*\\s*\\n?\\s*\\*?\\s*${folder} —`), `src/lib/${folder}/index.ts starts with a comment naming what '${folder}' offers`);
      assert.doesNotMatch(text, /export \* from/, `src/lib/${folder}/index.ts names its exports instead of re-exporting everything`);
    }
  });

  it('a folder imports only from the folders below it, through their index', function () {
    const wrong: string[] = [];
    for (const file of libFiles) {
      const from = floorOf(file);
      if (from === '') continue;
      for (const { spec, target } of importsOf(file)) {
        if (!spec.startsWith('.')) continue;
        const to = floorOf(target);
        if (to === from) continue;
        const where = `${path.relative(SRC, file)} imports '${spec}'`;
        if (to === '') wrong.push(`${where}: the lib's own index`);
        else if (FLOORS.indexOf(to) < FLOORS.indexOf(from)) wrong.push(`${where}: '${to}' is above '${from}'`);
        else if (target !== path.join(LIB, to, 'index.ts')) wrong.push(`${where}: not through '${to}/index.ts'`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('has no import circles, within a folder or across', function () {
    assert.deepEqual(circlesAmong(libFiles), []);
  });

  it('imports nothing of Node-RED and holds no node-type tables', function () {
    const wrong: string[] = [];
    for (const file of libFiles) {
      for (const { spec, target } of importsOf(file)) {
        if (/node-red/.test(spec) || (spec.startsWith('.') && !target.startsWith(LIB))) wrong.push(`${path.relative(SRC, file)} imports '${spec}'`);
      }
      const type = NODE_TYPES.exec(withoutComments(readFileSync(file, 'utf8')));
      if (type) wrong.push(`${path.relative(SRC, file)} names the node type ${type[1] ?? ''}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('the nodes reach src/lib through the folders’ indexes (the browser-side modules take single pure files)', function () {
    const wrong: string[] = [];
    for (const file of filesUnder(path.join(SRC, 'nodes'))) {
      if (BROWSER_SIDE.some((side) => file === side || file.startsWith(`${side}${path.sep}`))) continue;
      for (const { spec, target } of importsOf(file)) {
        const to = target.startsWith(LIB) ? floorOf(target) : undefined;
        if (to && target !== path.join(LIB, to, 'index.ts')) wrong.push(`${path.relative(SRC, file)} imports '${spec}'`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('keeps no module-level registry: objects are found through the objects that own them', function () {
    /** Module-level collections that are not registries, and why. */
    const allowed: Record<string, string> = {
      UNTRUSTED_CERT: 'a constant set of error codes',
      ASCII: 'a constant set of charset names',
      UTF8: 'a constant set of charset names',
      decoders: 'a cache of stateless TextDecoders, one per charset',
      typeCache: 'a bounded cache of what a content type means',
      english: 'a cache of the en-US catalogs read from disk',
      UNREACHABLE: 'a constant set of error codes',
      AUTH: 'a constant set of error codes',
      SCHEMA: 'a constant set of error codes',
    };
    const wrong: string[] = [];
    for (const file of [...libFiles, ...filesUnder(path.join(SRC, 'nodes'))]) {
      const code = withoutComments(readFileSync(file, 'utf8'));
      for (const match of code.matchAll(/^(?:export )?(?:const|let|var) (\w+)\s*(?::[^=]+)?=\s*new (Map|Set|WeakMap)\b/gm)) {
        if (!((match[1] ?? '') in allowed)) wrong.push(`${path.relative(SRC, file)}: module-level ${match[2] ?? ''} '${match[1] ?? ''}'`);
      }
    }
    assert.deepEqual(wrong, []);
  });
});

/**
 * The parts of src/ top to bottom: the editor's composition root (src/editor.ts) wires the nodes'
 * dialogs and the converter's editor action; the flow converter (src/migrate, which reads every node
 * type's property tables to fill in a converted node); each node's folder; what the nodes share (src/nodes/shared); the editor's toolkit the dialogs use (src/editor); the
 * library (src/lib, whose own floors the tests above keep). A part imports only parts below it.
 */
export const PARTS: ReadonlyArray<{ part: (rel: string) => string | undefined; rank: number }> = [
  { part: (rel) => (rel === 'editor.ts' ? 'editor.ts' : undefined), rank: 0 },
  { part: (rel) => (rel.startsWith('migrate/') ? 'migrate' : undefined), rank: 1 },
  { part: (rel) => (/^nodes\/(?!shared\/)[^/]+\//.test(rel) ? rel.split('/').slice(0, 2).join('/') : undefined), rank: 2 },
  { part: (rel) => (rel.startsWith('nodes/shared/') ? 'nodes/shared' : undefined), rank: 3 },
  { part: (rel) => (rel.startsWith('editor/') ? 'editor' : undefined), rank: 4 },
  { part: (rel) => (rel.startsWith('lib/') ? 'lib' : undefined), rank: 5 },
];

/** A file's part of src/ and its rank (paths relative to src/, with '/'). */
export function partOf(rel: string): { part: string; rank: number } | undefined {
  for (const { part, rank } of PARTS) {
    const name = part(rel);
    if (name !== undefined) return { part: name, rank };
  }
  return undefined;
}

/** The imports that lead from a part to one beside or above it (`from -> to`, relative to src/). */
export function arrowsBackUp(imports: Array<{ from: string; to: string }>): string[] {
  const back: string[] = [];
  for (const { from, to } of imports) {
    const a = partOf(from);
    const b = partOf(to);
    if (!a || !b) back.push(`${from} -> ${to}: outside the parts of src/`);
    else if (a.part !== b.part && b.rank <= a.rank) back.push(`${from} -> ${to}: '${b.part}' is not below '${a.part}'`);
  }
  return back;
}

/** Every relative import among src's files, as `from -> to` relative to src/. */
function srcImports(): Array<{ from: string; to: string }> {
  const rel = (file: string): string => path.relative(SRC, file).split(path.sep).join('/');
  return filesUnder(SRC).flatMap((file) =>
    importsOf(file)
      .filter((i) => i.spec.startsWith('.'))
      .map((i) => ({ from: rel(file), to: rel(i.target) })),
  );
}

/** The composition roots: what Node-RED loads (package.json "node-red"), the bin, the editor bundle's entry. */
function roots(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(SRC, '../package.json'), 'utf8')) as { bin: Record<string, string>; 'node-red': { nodes: Record<string, string> } };
  const built = [...Object.values(pkg['node-red'].nodes), ...Object.values(pkg.bin)];
  return [...built.map((file) => file.replace(/^dist\//, '').replace(/\.js$/, '.ts')), 'editor.ts'];
}

describe('architecture of src/nodes and src/editor', function () {
  it('imports only down: editor root, node folders and converter, shared, editor toolkit, lib (no arrow back up)', function () {
    assert.deepEqual(arrowsBackUp(srcImports()), []);
  });

  it('finds an arrow back up (a check that cannot fail is no check)', function () {
    assert.deepEqual(
      arrowsBackUp([
        { from: 'editor/index.ts', to: 'nodes/shared/properties.ts' },
        { from: 'editor/nodes/index.ts', to: 'nodes/retry-broker/editor.ts' },
        { from: 'nodes/shared/status.ts', to: 'nodes/retry-broker/status.ts' },
        { from: 'nodes/retry-broker/editor.ts', to: 'migrate/editor-action.ts' },
        { from: 'nodes/retry-broker/editor.ts', to: 'editor.ts' },
        { from: 'lib/consume/intake.ts', to: 'editor/red.ts' },
      ]).map((arrow) => arrow.split(':')[0]),
      [
        'editor/index.ts -> nodes/shared/properties.ts',
        'editor/nodes/index.ts -> nodes/retry-broker/editor.ts',
        'nodes/shared/status.ts -> nodes/retry-broker/status.ts',
        'nodes/retry-broker/editor.ts -> migrate/editor-action.ts',
        'nodes/retry-broker/editor.ts -> editor.ts',
        'lib/consume/intake.ts -> editor/red.ts',
      ],
    );
    assert.deepEqual(arrowsBackUp([{ from: 'editor.ts', to: 'nodes/park-replay/editor-parking-browser.ts' }, { from: 'nodes/park-replay/editor.ts', to: 'editor/index.ts' }, { from: 'migrate/editor-action.ts', to: 'editor/red.ts' }]), []);
  });

  it('the composition roots are on top: nothing in src imports the editor root, a node\'s runtime Node-RED loads, or the bin', function () {
    const tops = new Set(roots());
    for (const root of tops) assert.ok(existsSync(path.join(SRC, root)), `src/${root} exists`);
    assert.deepEqual(
      srcImports().filter((i) => tops.has(i.to)).map((i) => `${i.from} imports ${i.to}`),
      [],
    );
  });

  it('has no import circles, among the nodes, the editor and the lib', function () {
    assert.deepEqual(circlesAmong(filesUnder(SRC)), []);
  });

  it('each node type is one folder: its runtime, its controller, its dialog, its html and its locales', function () {
    const missing: string[] = [];
    for (const type of ALL_NODE_TYPES) {
      for (const file of [`${type}.ts`, 'controller.ts', 'editor.ts', `${type}.html`, `locales/en-US/${type}.json`]) {
        if (!existsSync(path.join(SRC, 'nodes', type, file))) missing.push(`src/nodes/${type}/${file}`);
      }
    }
    const folders = readdirSync(path.join(SRC, 'nodes')).filter((entry) => entry !== 'shared');
    assert.deepEqual(missing, []);
    assert.deepEqual(folders.sort(), [...ALL_NODE_TYPES].sort(), 'src/nodes holds one folder per node type, and shared/');
  });

  it('names a node type only through NODE_TYPE (src/nodes/shared/node-types.ts), never as a string', function () {
    const types = new RegExp(`['"\`](${ALL_NODE_TYPES.join('|')})['"\`]`);
    const wrong = filesUnder(SRC)
      .filter((file) => file !== path.join(SRC, 'nodes/shared/node-types.ts'))
      .flatMap((file) => {
        const found = types.exec(withoutComments(readFileSync(file, 'utf8')));
        return found ? [`${path.relative(SRC, file)} writes '${found[1] ?? ''}'`] : [];
      });
    assert.deepEqual(wrong, []);
  });

  it('shared/ holds only what two or more use (node types, other shared modules, the editor, the converter)', function () {
    const shared = path.join(SRC, 'nodes', 'shared');
    const users = new Map<string, Set<string>>();
    for (const file of filesUnder(SRC)) {
      const rel = path.relative(SRC, file).split(path.sep);
      const user = rel[0] === 'nodes' ? (rel[1] === 'shared' ? path.relative(SRC, file) : `nodes/${rel[1] ?? ''}`) : (rel[0] ?? '');
      for (const { target } of importsOf(file)) {
        if (path.dirname(target) !== shared || target === file) continue;
        users.set(target, (users.get(target) ?? new Set()).add(user));
      }
    }
    const alone = filesUnder(shared)
      .filter((file) => (users.get(file)?.size ?? 0) < 2)
      .map((file) => `${path.relative(SRC, file)} (used by ${[...(users.get(file) ?? [])].join(', ') || 'nothing'}): move it into its node's folder`);
    assert.deepEqual(alone, []);
  });

  it("a node's folder imports no other node's folder, and shared/ imports none: what two use is shared", function () {
    const wrong: string[] = [];
    const nodes = path.join(SRC, 'nodes');
    for (const file of filesUnder(nodes)) {
      const from = path.relative(nodes, file).split(path.sep)[0];
      for (const { spec, target } of importsOf(file)) {
        if (!target.startsWith(`${nodes}${path.sep}`)) continue;
        const to = path.relative(nodes, target).split(path.sep)[0];
        if (to !== from && to !== 'shared') wrong.push(`${path.relative(SRC, file)} imports '${spec}'`);
      }
    }
    assert.deepEqual(wrong, []);
  });
});
