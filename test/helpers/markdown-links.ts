/**
 * The relative links of the markdown docs — links, images and HTML `<img src>` / `<a href>` — with the
 * anchors GitHub gives their headings: read by the docs test on the repository and by the package test
 * on the packed tarball.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface RelativeLink {
  /** As written. */
  target: string;
  /** The file (or directory) it points to; the linking file itself for `#…`. */
  file: string;
  anchor: string | undefined;
}

/** The markdown files under dir, recursively. */
export function markdownUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    return statSync(file).isDirectory() ? markdownUnder(file) : file.endsWith('.md') ? [file] : [];
  });
}

/** Relative link targets of a markdown file: the file they point to and the anchor. */
export function relativeLinks(file: string): RelativeLink[] {
  // Code spans and blocks hold examples, not links.
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const markdown = [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] ?? '');
  const html = [...text.matchAll(/<(?:img|a|source)\b[^>]*?\s(?:src|href|srcset)\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1] ?? '');
  return [...markdown, ...html]
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => {
      const [name = '', anchor] = target.split('#');
      return { target, file: name === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(name)), anchor };
    });
}

/** The anchors GitHub gives a markdown file's headings. */
export function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set(
    [...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) =>
      (m[1] ?? '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    ),
  );
}
