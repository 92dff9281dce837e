import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';

/** No key of the identity provider is known yet, and they cannot be fetched now: the HTTP layer answers 503 with Retry-After. */
export class KeysUnavailableError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super("the identity provider's keys (JWT_JWKS_URL) cannot be fetched to verify this JWT; retry later");
    this.name = 'KeysUnavailableError';
  }
}

/**
 * The key a token names (its `kid`) is in the key set, but not for the token's algorithm (published with
 * another `alg`, or of another type): jose says JWKSNoMatchingKey, as for a key id the set does not hold.
 * It is no unknown key, so the set is not fetched again for it, and the refusal says which it is.
 */
export class KeyNotForAlgorithm extends errors.JWKSNoMatchingKey {
  constructor(readonly alg: string) {
    super(`the key the JWT names is not published for ${alg}`);
  }
}

/** Known keys are fetched again in the background after this long; the known ones serve meanwhile. */
export const JWKS_REFRESH_MS = 10 * 60_000;
/** A token naming a key id not among the known keys makes the set be fetched again, at most once in this long. */
export const JWKS_UNKNOWN_KID_REFETCH_MS = 30_000;
/** With no key known yet (the endpoint never answered), a request may try a fetch again after this long. */
export const JWKS_RETRY_MS = 5000;
const FETCH_TIMEOUT_MS = 5000;
/** A key set is a few KiB: an answer larger than this is not one, and is not read beyond it. */
export const JWKS_MAX_BYTES = 1024 * 1024;

/**
 * The answer's body as text, read as it streams and given up (the connection closed) once it passes
 * JWKS_MAX_BYTES: an answer of any size would otherwise be held whole in memory, and parsed.
 */
async function boundedText(response: Response): Promise<string> {
  const tooLarge = () => new Error(`answered more than ${JWKS_MAX_BYTES / 1024 / 1024} MiB, more than a key set takes: not read further`);
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > JWKS_MAX_BYTES) {
    await response.body?.cancel();
    throw tooLarge();
  }
  if (response.body === null) return '';
  // A fetch's body is bytes (Node's types leave its chunks untyped).
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > JWKS_MAX_BYTES) {
      // Cancelling the body ends the connection.
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(read.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * An identity provider's public keys (a JWKS at JWT_JWKS_URL), fetched, cached and fetched again when a
 * token names a key id not seen yet (the provider rotated its keys), at most once per
 * JWKS_UNKNOWN_KID_REFETCH_MS so that tokens with made-up key ids cannot make the service hammer the
 * provider. jose picks the key from the set (createLocalJWKSet).
 *
 * Why not jose's createRemoteJWKSet: once its cache is older than its maximum age it fetches before
 * answering and fails every token while the provider is down, and without keys it fetches again for
 * every token, each waiting for its time-out. Here known keys keep serving while a refresh fails, and
 * without keys the requests between two attempts are answered 503 at once.
 */
export class RemoteKeySet {
  private keys: JWTVerifyGetKey | undefined;
  /** The key ids of the set `keys` was made from. */
  private kids = new Set<string>();
  private fetchedAt = -Infinity;
  private attemptedAt = -Infinity;
  private kidRefetchedAt = -Infinity;
  private pending: Promise<void> | undefined;
  private readonly stopped = new AbortController();

  constructor(
    private readonly url: URL,
    /** Told why a fetch failed (a log line); never throws. */
    private readonly onFetchFailure: (reason: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key for a token's header, as jose's jwtVerify asks for it. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const keys = this.keys ?? (await this.firstKeys());
    if (this.now() - this.fetchedAt >= JWKS_REFRESH_MS && this.now() - this.attemptedAt >= JWKS_UNKNOWN_KID_REFETCH_MS) void this.refresh();
    try {
      return await keys(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      this.throwWhenKnown(header);
      if (this.pending === undefined) {
        if (this.now() - this.kidRefetchedAt < JWKS_UNKNOWN_KID_REFETCH_MS) throw error;
        this.kidRefetchedAt = this.now();
      }
      await this.refresh();
      try {
        return await this.keys!(header, token);
      } catch (again) {
        if (again instanceof errors.JWKSNoMatchingKey) this.throwWhenKnown(header);
        throw again;
      }
    }
  };

  /** A token whose key id is in the set, no key of it matching: the key is there, for another algorithm. */
  private throwWhenKnown(header: Parameters<JWTVerifyGetKey>[0]): void {
    if (header.kid !== undefined && this.kids.has(header.kid)) throw new KeyNotForAlgorithm(String(header.alg));
  }

  /** Fetches the keys now, ahead of the first token; a failure is only reported. */
  warmUp(): void {
    void this.refresh();
  }

  /** Ends a fetch in flight (the service is stopping). */
  close(): void {
    this.stopped.abort();
  }

  private async firstKeys(): Promise<JWTVerifyGetKey> {
    if (this.pending === undefined && this.now() - this.attemptedAt >= JWKS_RETRY_MS) void this.refresh();
    await this.pending;
    if (this.keys === undefined) {
      throw new KeysUnavailableError(JWKS_RETRY_MS / 1000);
    }
    return this.keys;
  }

  /** One fetch at a time; everyone asking meanwhile waits for that one. Never rejects. */
  private refresh(): Promise<void> {
    this.pending ??= this.fetchKeys().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async fetchKeys(): Promise<void> {
    this.attemptedAt = this.now();
    // A timer of our own, cleared when the fetch ends: AbortSignal.timeout's timer can be lost to the garbage
    // collector on Node 20 when combined with AbortSignal.any (nodejs/node#57736), and the fetch then waits
    // for the provider as long as it likes.
    const attempt = new AbortController();
    const timer = setTimeout(() => attempt.abort(new Error(`no answer within ${FETCH_TIMEOUT_MS / 1000} s`)), FETCH_TIMEOUT_MS);
    const stop = () => attempt.abort(new Error('the service is stopping'));
    this.stopped.signal.addEventListener('abort', stop);
    try {
      const response = await fetch(this.url, {
        headers: { accept: 'application/jwk-set+json, application/json' },
        // The configured URL and no other: a redirect is a failure, as in jose.
        redirect: 'error',
        signal: attempt.signal,
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        throw new Error(`answered ${response.status}`);
      }
      // createLocalJWKSet refuses anything that is not a key set.
      const set = JSON.parse(await boundedText(response)) as JSONWebKeySet;
      this.keys = createLocalJWKSet(set);
      this.kids = new Set(set.keys.flatMap((key) => (typeof key.kid === 'string' ? [key.kid] : [])));
      this.fetchedAt = this.now();
    } catch (error) {
      if (this.stopped.signal.aborted) return;
      const reason: unknown = attempt.signal.aborted ? attempt.signal.reason : error;
      const cause = reason instanceof Error && reason.cause instanceof Error ? `: ${reason.cause.message}` : '';
      this.onFetchFailure(`${reason instanceof Error ? reason.message : String(reason)}${cause}`);
    } finally {
      clearTimeout(timer);
      this.stopped.signal.removeEventListener('abort', stop);
    }
  }
}
