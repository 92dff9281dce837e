import { createHash, type Hash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * What a request with an Idempotency-Key is (Fingerprint), begun by the JSON body parser with the body
     * as sent; null without a key, or before its body (a streamed one is added as it arrives).
     */
    fingerprint: Fingerprint | null;
  }
}

/**
 * A keyed POST's fingerprint: a later request with the key must have the same one, or it is another
 * request (422). The method, path and query, the headers that change what a POST does (Content-Type,
 * If-Match, If-None-Match, Prefer) and the body's bytes, as sent, hashed (SHA-256, base64url). The recipe
 * is kept: fingerprints kept by earlier releases (and made by another instance of an earlier release,
 * during an upgrade) must still match.
 */
export class Fingerprint {
  private readonly hash: Hash;
  private value: string | undefined;

  constructor(request: FastifyRequest) {
    const { headers } = request;
    this.hash = createHash('sha256').update(
      `${request.method}\n${request.url}\n${headers['content-type'] ?? ''}\n${headers['if-match'] ?? ''}\n${headers['if-none-match'] ?? ''}\n`,
    );
    // Prefer (handling=strict refuses what lenient ignores) only when sent: the fingerprints of requests
    // without it stay those an earlier release kept.
    const prefer = headers.prefer;
    if (prefer !== undefined) this.hash.update(`prefer:${String(prefer)}\n`);
  }

  /** Adds a piece of the body, as it arrives (bound: handed to the reader of a streamed body). */
  readonly update = (chunk: Buffer): void => {
    this.hash.update(chunk);
  };

  /** The fingerprint, once the body is whole. */
  digest(): string {
    return (this.value ??= this.hash.digest('base64url'));
  }
}

/**
 * Begins a keyed request's fingerprint as its body parser takes the body (http/json.ts; a streamed body,
 * the import's, is added as it is read): carried by the request to the route's write (http/writes.ts).
 */
export function fingerprintBody(request: FastifyRequest, body?: Buffer): void {
  if (request.headers['idempotency-key'] === undefined) return;
  const fingerprint = new Fingerprint(request);
  if (body !== undefined) fingerprint.update(body);
  request.fingerprint = fingerprint;
}
