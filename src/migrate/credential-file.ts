/**
 * Node-RED's credentials file (flows_cred.json): plain JSON by node id, or encrypted with the
 * credential secret ({"$": iv + AES-256-CTR ciphertext}, the key the secret's SHA-256), as Node-RED's
 * runtime writes it. Node.js only: the command's side, not the editor's.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { FlowCredentials } from './types';

export const SECRET_VARIABLE = 'NODE_RED_CREDENTIAL_SECRET';

export class CredentialFileError extends Error {}

const key = (secret: string): Buffer => createHash('sha256').update(secret).digest();

export function isEncrypted(file: unknown): file is { $: string } {
  return typeof file === 'object' && file !== null && typeof (file as { $?: unknown }).$ === 'string';
}

/** The credentials a file holds; an encrypted one needs the secret (else a clear refusal). */
export function readCredentials(file: unknown, secret: string | undefined, where: string): FlowCredentials {
  if (!isEncrypted(file)) {
    if (typeof file !== 'object' || file === null || Array.isArray(file)) throw new CredentialFileError(`${where} is not a credentials file (a JSON object by node id)`);
    return file as FlowCredentials;
  }
  if (!secret) {
    throw new CredentialFileError(
      `${where} is encrypted with Node-RED's credential secret: set ${SECRET_VARIABLE} to it (settings.js credentialSecret, or _credentialSecret in .config.runtime.json) to convert the credentials too, or pass --no-credentials to convert without them (then enter the user and password in each retry-broker)`,
    );
  }
  const iv = Buffer.from(file.$.slice(0, 32), 'hex');
  const decipher = createDecipheriv('aes-256-ctr', key(secret), iv);
  const text = decipher.update(file.$.slice(32), 'base64', 'utf8') + decipher.final('utf8');
  try {
    return JSON.parse(text) as FlowCredentials;
  } catch {
    throw new CredentialFileError(`${where} does not decrypt with ${SECRET_VARIABLE}: is it the right secret?`);
  }
}

/** A credentials file's content: encrypted with the secret when given (as the input was), else plain. */
export function credentialsFile(credentials: FlowCredentials, secret: string | undefined): unknown {
  if (!secret) return credentials;
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-ctr', key(secret), iv);
  return { $: iv.toString('hex') + cipher.update(JSON.stringify(credentials), 'utf8', 'base64') + cipher.final('base64') };
}
