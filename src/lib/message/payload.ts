/** Message bodies to `msg.payload` and back. Pure. */
import { isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';

/** `auto` decodes a body by its content type; the others force one decoding. */
export type DecodeMode = 'auto' | 'json' | 'string' | 'buffer';

export type DecodeResult =
  | { ok: true; payload: unknown; as: 'json' | 'string' | 'buffer' }
  /** `raw`: what the flow gets with *invalid body: error* (the text, or the bytes when they are not text). */
  | { ok: false; error: string; raw: string | Buffer };

/** `application/json`, `application/vnd.x+json; charset=utf-8`, ... */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || type.endsWith('+json');
}

export function isTextContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return type.startsWith('text/') || type === 'application/xml' || type.endsWith('+xml');
}

/** The `charset` parameter of a content type, lower-cased; undefined when there is none. */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  for (const param of contentType.split(';').slice(1)) {
    const [key, ...value] = param.split('=');
    if (key?.trim().toLowerCase() === 'charset') return value.join('=').trim().replace(/^"(.*)"$/, '$1').toLowerCase() || undefined;
  }
  return undefined;
}

const ASCII = new Set(['us-ascii', 'ascii', 'iso646-us', 'ansi_x3.4-1968', 'us']);
const UTF8 = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8']);
/** Decoders by charset: a decode without `stream` keeps no state, so one per charset serves every body. */
const decoders = new Map<string, TextDecoder>();

function decoderFor(charset: string): TextDecoder | undefined {
  let decoder = decoders.get(charset);
  if (!decoder) {
    try {
      decoder = new TextDecoder(charset, { fatal: true });
    } catch {
      return undefined;
    }
    decoders.set(charset, decoder);
  }
  return decoder;
}

/**
 * Bytes to text in the body's charset (UTF-8 when none is given). Charset names follow the WHATWG
 * Encoding Standard that Node's TextDecoder implements (`iso-8859-1` and `latin1` read as
 * windows-1252, as browsers do), except US-ASCII, which is strict 7-bit here: a byte over 0x7F is
 * not ASCII, and a wrong claim must not pass as text. Bytes not valid in the charset are an error.
 */
export function decodeText(content: Buffer, charset = 'utf-8'): { ok: true; text: string } | { ok: false; error: string } {
  // The common case on the hot path: a validity check and Buffer's own decoder.
  if (UTF8.has(charset)) return isUtf8(content) ? { ok: true, text: content.toString('utf8') } : { ok: false, error: `body is not valid ${charset}` };
  if (ASCII.has(charset)) {
    const bad = content.findIndex((byte) => byte > 0x7f);
    return bad < 0 ? { ok: true, text: content.toString('latin1') } : { ok: false, error: `body is not valid ${charset} (byte 0x${content[bad]?.toString(16)} at offset ${bad})` };
  }
  const decoder = decoderFor(charset);
  if (!decoder) return { ok: false, error: `body has an unknown charset '${charset}' (use e.g. utf-8, iso-8859-1, us-ascii, utf-16le)` };
  try {
    return { ok: true, text: decoder.decode(content) };
  } catch {
    return { ok: false, error: `body is not valid ${charset}` };
  }
}

interface ContentTypeInfo {
  as: 'json' | 'string' | 'buffer';
  charset: string | undefined;
}
/**
 * What a content type means for decoding, for the last few distinct types: a consumer sees the same
 * one or two on every delivery, and parsing the text each time was a measurable part of the hot path.
 */
const typeCache = new Map<string | undefined, ContentTypeInfo>();
function typeOf(contentType: string | undefined): ContentTypeInfo {
  let info = typeCache.get(contentType);
  if (!info) {
    info = { as: isJsonContentType(contentType) ? 'json' : isTextContentType(contentType) ? 'string' : 'buffer', charset: charsetOf(contentType) };
    if (typeCache.size >= 64) typeCache.clear(); // bounded: content types come from publishers
    typeCache.set(contentType, info);
  }
  return info;
}

/**
 * Decodes a body. Text honours the content type's `charset`. A body that is not valid in its
 * charset, or claims JSON but does not parse, is an error, never passed on as a string: the caller
 * parks it (or reports it) with the reason.
 */
export function decodePayload(content: Buffer, contentType: string | undefined, mode: DecodeMode = 'auto'): DecodeResult {
  const type = typeOf(contentType);
  const as = mode === 'auto' ? type.as : mode;
  if (as === 'buffer') return { ok: true, payload: content, as };
  // UTF-8 JSON, the common case on every delivery: decodeText's UTF-8 branch without its result object.
  if (as === 'json' && UTF8.has(type.charset ?? 'utf-8') && isUtf8(content)) return parsedJson(content.toString('utf8'));
  const decoded = decodeText(content, type.charset);
  if (!decoded.ok) return { ok: false, error: decoded.error, raw: content };
  if (as === 'string') return { ok: true, payload: decoded.text, as };
  return parsedJson(decoded.text);
}

function parsedJson(text: string): DecodeResult {
  try {
    return { ok: true, payload: JSON.parse(text) as unknown, as: 'json' };
  } catch (err) {
    return { ok: false, error: `body is not valid JSON (${(err as Error).message})`, raw: text };
  }
}

/** A payload to a body, with the content type it implies when the caller did not set one. */
export function encodePayload(payload: unknown): { content: Buffer; contentType: string | undefined } {
  if (Buffer.isBuffer(payload)) return { content: payload, contentType: undefined };
  if (typeof payload === 'string') return { content: Buffer.from(payload, 'utf8'), contentType: 'text/plain' };
  if (payload === undefined) return { content: Buffer.alloc(0), contentType: undefined };
  let json: string | undefined;
  try {
    json = JSON.stringify(payload);
  } catch (err) {
    // e.g. a circular structure or a BigInt; the first line of the message says which.
    throw new Error(`msg.payload cannot be encoded as JSON: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
  if (json === undefined) throw new Error(`msg.payload is a ${typeof payload}, which cannot be sent: use an object, a string or a Buffer`);
  return { content: Buffer.from(json, 'utf8'), contentType: 'application/json' };
}
