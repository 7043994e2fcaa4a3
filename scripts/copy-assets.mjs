// Copies the editor files (HTML, locales) of every node from src/nodes to dist/nodes, and the
// package's icons (src/icons) next to each node: Node-RED looks for icons in an `icons` folder
// beside a node's .js file, so each node set finds them even when others are disabled.
import { cpSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const src = fileURLToPath(new URL('../src/nodes', import.meta.url));
const dist = fileURLToPath(new URL('../dist/nodes', import.meta.url));
const icons = fileURLToPath(new URL('../src/icons', import.meta.url));
cpSync(src, dist, { recursive: true, filter: (file) => !file.endsWith('.ts') });
for (const node of readdirSync(dist)) {
  if (node !== 'shared' && statSync(path.join(dist, node)).isDirectory()) cpSync(icons, path.join(dist, node, 'icons'), { recursive: true });
}
