/**
 * How the parking browser shows one message's whole body: JSON pretty-printed, text, or a hex dump
 * (binary). Pure, and free of the editor's globals (unit-tested in Node.js).
 */

export type BodyView = 'json' | 'text' | 'hex';

/** A body as the parking endpoint sends it (a ParkedMessage's preview, asked for in full). */
export interface ParkedBody {
  /** Text when `encoding` is utf8, else base64. */
  preview: string;
  previewEncoding?: 'utf8' | 'base64';
  /** Bytes of the whole body. */
  size: number;
  /** True when the endpoint sent only the first bytes (see BODY_LIMIT). */
  truncated?: boolean;
}

/** The most bytes a hex dump shows (16 per line); the text says how many more there are. */
export const HEX_LIMIT = 64 * 1024;

export function bodyBytes(body: ParkedBody): Uint8Array {
  if (body.previewEncoding !== 'base64') return new TextEncoder().encode(body.preview);
  const binary = atob(body.preview);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function parsedJson(body: ParkedBody): { value: unknown } | undefined {
  if (body.previewEncoding === 'base64' || body.truncated) return undefined;
  if (body.preview.trim() === '') return undefined;
  try {
    return { value: JSON.parse(body.preview) as unknown };
  } catch {
    return undefined;
  }
}

/** The views a body has, the best first: JSON when it parses, text when it is text, hex always. */
export function bodyViews(body: ParkedBody): BodyView[] {
  const views: BodyView[] = [];
  if (parsedJson(body)) views.push('json');
  if (body.previewEncoding !== 'base64') views.push('text');
  views.push('hex');
  return views;
}

/** `offset  16 bytes in hex  |printable ASCII|`, one line per 16 bytes. */
export function hexDump(bytes: Uint8Array): string {
  const lines: string[] = [];
  for (let offset = 0; offset < bytes.length; offset += 16) {
    const row = bytes.subarray(offset, offset + 16);
    const hex = Array.from(row, (b) => b.toString(16).padStart(2, '0'));
    const left = hex.slice(0, 8).join(' ');
    const right = hex.slice(8).join(' ');
    const ascii = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${offset.toString(16).padStart(8, '0')}  ${left.padEnd(23)}  ${right.padEnd(23)}  |${ascii}|`);
  }
  return lines.join('\n');
}

/** The body in one view; a hex dump stops at HEX_LIMIT bytes (`hidden` says how many it leaves out). */
export function renderBody(body: ParkedBody, view: BodyView): { text: string; hidden: number } {
  if (view === 'json') {
    const json = parsedJson(body);
    if (json) return { text: JSON.stringify(json.value, null, 2), hidden: 0 };
  }
  if (view !== 'hex' && body.previewEncoding !== 'base64') return { text: body.preview, hidden: 0 };
  const bytes = bodyBytes(body);
  return { text: hexDump(bytes.subarray(0, HEX_LIMIT)), hidden: Math.max(0, bytes.length - HEX_LIMIT) };
}
