// Copies the editor files (HTML, locales, icons) of every node from src/nodes to dist/nodes.
import { cpSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const src = fileURLToPath(new URL('../src/nodes', import.meta.url));
const dist = fileURLToPath(new URL('../dist/nodes', import.meta.url));
cpSync(src, dist, { recursive: true, filter: (path) => !path.endsWith('.ts') });
