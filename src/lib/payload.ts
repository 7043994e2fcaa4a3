/** Message bodies to `msg.payload` and back. Pure. */

/** `auto` decodes by content type; the others force one decoding whatever the content type says. */
export type DecodeMode = 'auto' | 'json' | 'string' | 'buffer';
export const DECODE_MODES: readonly DecodeMode[] = ['auto', 'json', 'string', 'buffer'];

export type DecodeResult =
  | { ok: true; payload: unknown; as: 'json' | 'string' | 'buffer' }
  | { ok: false; error: string };

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

/**
 * Decodes a body. A body that claims to be JSON but does not parse is an error, never passed on as
 * a string: the caller parks it (or reports it) with the reason.
 */
export function decodePayload(content: Buffer, contentType: string | undefined, mode: DecodeMode = 'auto'): DecodeResult {
  const as = mode === 'auto' ? (isJsonContentType(contentType) ? 'json' : isTextContentType(contentType) ? 'string' : 'buffer') : mode;
  if (as === 'buffer') return { ok: true, payload: content, as };
  const text = content.toString('utf8');
  if (as === 'string') return { ok: true, payload: text, as };
  try {
    return { ok: true, payload: JSON.parse(text) as unknown, as };
  } catch (err) {
    return { ok: false, error: `body is not valid JSON (${(err as Error).message})` };
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
