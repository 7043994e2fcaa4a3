/** Connection errors (socket, TLS, AMQP handshake) in words a user can act on. Pure. */
import type { ConnectTarget } from './settings';

const UNTRUSTED_CERT = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

/** Connection errors as a user can act on them; `target` names the broker, vhost and user. */
export function describeConnectionError(err: Error, target?: Pick<ConnectTarget, 'address' | 'vhost' | 'user'>): string {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const at = target ? ` at ${target.address}` : '';
  const host = target ? target.address.replace(/:\d+$/, '') : 'the broker';
  if (code === 'ECONNREFUSED') return `connection refused: is RabbitMQ running${at}?`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `broker host ${target ? `'${host}' ` : ''}not found`;
  if (code === 'ETIMEDOUT' || /ETIMEDOUT/.test(err.message)) return `connection timed out${at}`;
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
    return `TLS handshake failed: ${target?.address ?? 'the broker'} does not speak TLS (amqps is usually 5671)`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const reason = ((err as Error & { reason?: string }).reason ?? err.message).replace(/[:\s]+$/, '');
    return `TLS: the broker's certificate is not valid for '${host}' (${reason}): connect by a name the certificate has, or set the server name in the TLS configuration`;
  }
  if (UNTRUSTED_CERT.has(code)) {
    return `TLS: the broker's certificate is not trusted (${err.message}): set the CA certificate that signed it in the TLS configuration`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `TLS: the broker's certificate is not valid now (${err.message})`;
  if (/CERTIFICATE_REQUIRED/.test(code)) return 'TLS: the broker requires a client certificate: set certificate and key in the TLS configuration';
  if (/BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN/.test(code)) return `TLS: the broker refused the client certificate (${code}): it must be signed by a CA the broker trusts`;
  if (/HANDSHAKE_FAILURE/.test(code)) return `TLS handshake failed: the broker refused it (${code}): does it require a client certificate?`;
  if (/ACCESS_REFUSED|\b403\b/.test(err.message)) return `access refused${target ? ` for user '${target.user}'` : ''}: check user and password`;
  // RabbitMQ refuses an unknown vhost by closing the connection instead of opening it (530 NOT_ALLOWED).
  if (/NOT_ALLOWED|\b530\b|Expected ConnectionOpenOk; got <ConnectionClose/.test(err.message)) {
    return target ? `vhost '${target.vhost}' not found or not allowed for user '${target.user}'` : 'vhost not found or not allowed for this user';
  }
  return err.message;
}
