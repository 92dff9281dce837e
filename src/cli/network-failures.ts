/**
 * A request to the service that got no answer, in words: why (from the code fetch's error carries in its
 * cause), and whether the request may have reached the service (api.ts decides what to say and whether to
 * ask again from that).
 */

/** Why a request got no answer, in words, from the code fetch's error carries in its cause. */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host (DNS)',
  EAI_AGAIN: 'the host name could not be resolved now (DNS)',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_SOCKET: 'the connection closed before the answer',
  UND_ERR_HEADERS_TIMEOUT: 'no answer came within 5 minutes',
  EPROTO: 'the TLS handshake failed',
  ERR_SSL_WRONG_VERSION_NUMBER: 'the TLS handshake failed',
};

/**
 * The failures of a connection that was made and then lost before the answer came: the request may have
 * been done, and only its answer lost. (A connection refused, a name that does not resolve, a failed TLS
 * handshake: the request never reached the service, so nothing is lost and asking again at once would fail
 * the same way.)
 */
export const ANSWER_LOST = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT']);

/** The innermost cause of a fetch failure. */
export function innermost(error: unknown): unknown {
  let cause: unknown = error;
  while (cause instanceof Error && cause.cause !== undefined) cause = cause.cause;
  return cause;
}

/** The innermost cause of a fetch failure, as a short reason. */
export function networkReason(error: unknown): string {
  const cause = innermost(error);
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  const reason = code === undefined ? undefined : NETWORK_REASONS[code];
  if (reason !== undefined) return `${reason} (${code})`;
  return cause instanceof Error ? cause.message : String(cause);
}
