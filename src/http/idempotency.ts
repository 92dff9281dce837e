import { createHash, type Hash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { IdempotencyStore, KeyClaim, KeptAnswer, StoredAnswer } from '../store/idempotency.js';
import { HttpError } from './errors.js';

/**
 * Idempotency-Key on every POST (docs/idempotency.md). The first request with a key runs, and its answer
 * is kept with its write, in one transaction (store/idempotency.ts); a later request with the same key
 * and the same request (method, path and query, the headers that change what a POST does, the body)
 * gets that answer again, with `Idempotent-Replayed: true`, and nothing is written again. The same key
 * with another request is 422; while the first is still running, 409. Keys are the owner's (the token's,
 * the JWT subject's). A request refused before its write (validation, auth, limits, an unavailable store)
 * keeps nothing. A POST without the header pays for one header lookup and nothing else.
 */

/** The draft's sf-string (`"…"`, with `\"` and `\\`) or Stripe's bare form; 1 to 255 printable ASCII characters either way. */
const KEY_PATTERN = '^(?:"(?:[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\\\\"]){1,255}"|[\\x21\\x23-\\x7E][\\x20-\\x7E]{0,254})$';

/** The header as every POST's headers schema declares it: validated (400 naming it), documented, typed. */
export const IdempotencyKeyHeaders = {
  'idempotency-key': Type.Optional(
    Type.String({
      pattern: KEY_PATTERN,
      patternMeaning: 'must be 1 to 255 printable ASCII characters, bare (`k-123`) or as a quoted string (`"k-123"`)',
      description:
        'A key of your own (a UUID, say) that makes a retry of this request safe: the first request with it runs, and a later one with the same key and the same request gets its answer again (`Idempotent-Replayed: true`) without doing anything again, for `IDEMPOTENCY_KEY_TTL` (24 h). The same key with another request: 422; while the first still runs: 409. Bare (`k-123`) or quoted (`"k-123"`), 1 to 255 printable ASCII characters; keys are per token.',
    }),
  ),
};

/** The messages of the 409 and the 422 (also the OpenAPI document's examples). */
export function stillRunning(key: string): string {
  return `a request with Idempotency-Key ${JSON.stringify(key)} is still running: retry once it has been answered`;
}
export function usedForAnother(key: string): string {
  return `Idempotency-Key ${JSON.stringify(key)} was used for another request (another method, path, query, If-Match, If-None-Match or body): send a new key with a new request`;
}

/** The key a valid header holds: a quoted string unquoted, a bare one as it is. */
export function keyOf(header: string): string {
  return header.startsWith('"') ? header.slice(1, -1).replace(/\\(["\\])/g, '$1') : header;
}

/** The bodies of keyed JSON requests, kept by the JSON parser (http/json.ts) for their fingerprint; no copy. */
const bodies = new WeakMap<FastifyRequest, Buffer>();

/** Called by the body parser for a request that has the header. */
export function noteKeyedBody(request: FastifyRequest, body: Buffer): void {
  bodies.set(request, body);
}

/** The fingerprint's start: what a POST is besides its body. */
function fingerprintHash(request: FastifyRequest): Hash {
  const { headers } = request;
  return createHash('sha256').update(
    `${request.method}\n${request.url}\n${headers['content-type'] ?? ''}\n${headers['if-match'] ?? ''}\n${headers['if-none-match'] ?? ''}\n`,
  );
}

/** The answer a JSON body is kept with, for an error status of the route's own (412, 404…), as the error handler writes it. */
export function errorAnswer(status: number, message: string): StoredAnswer {
  return { status, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify({ error: status, message }) };
}

/** What Fastify sends a JSON answer as. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A JSON answer of the route, its body serialized by the route's own serializer for that status: the
 * bytes the route sends without a key. (A body with slots, numbers the write makes, is written by hand.)
 */
export function jsonAnswer(reply: FastifyReply, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): StoredAnswer {
  const serialize = reply.getSerializationFunction(String(status));
  if (serialize === undefined) throw new Error(`${reply.request.method} ${reply.request.url}: no ${status} answer in the route's schema`);
  return { status, headers: { 'content-type': JSON_TYPE, ...headers }, body: serialize(body) };
}

/** The answer header of a replay, as the OpenAPI document shows it on every POST's success. */
export const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    description: '`true` on the answer kept for the Idempotency-Key, sent again: nothing was done again (any status may come so)',
    schema: { type: 'string' },
  },
};

/** The key the OpenAPI document's examples name. */
const EXAMPLE_KEY = '5f0c3a1e-8d5b-4f7e-9a61-2b7c0d9e4f13';

/** The statuses every keyed POST may answer besides its own, for its response schema, and their examples. */
export const KEY_STATUSES = [409, 422] as const;
export const KEY_EXAMPLES = { 409: stillRunning(EXAMPLE_KEY), 422: usedForAnother(EXAMPLE_KEY) };

/** Told of what keys did (metrics). */
export interface IdempotencyObserver {
  replayed(): void;
  conflict(reason: 'running' | 'another-request'): void;
}

/** A streamed body's fingerprint, updated as it arrives, and the claim it completes at the end. */
export interface StreamedClaim {
  update: (chunk: Buffer) => void;
  claim: () => KeyClaim;
}

/** The keys of one app: which run now (409) in this process, and how their answers are kept and sent. */
export class Idempotency {
  private readonly running = new Set<string>();

  constructor(
    readonly store: IdempotencyStore,
    private readonly ttlMs: number,
    private readonly observer?: IdempotencyObserver,
  ) {}

  /**
   * A POST whose request is whole (a JSON body, or none) under its key: `write` makes the write keeping
   * its answer, or finds the earlier answer instead (in its transaction); 422 when that was another
   * request's. With `findFirst`, the earlier answer is looked for before `write` is called: for a write
   * whose own checks (a URL's DNS) must not run again for a retry. `write` may refuse: a 400 keeps nothing.
   */
  async run(
    request: FastifyRequest,
    reply: FastifyReply,
    header: string,
    write: (claim: KeyClaim) => Promise<KeptAnswer>,
    { findFirst = false } = {},
  ): Promise<FastifyReply> {
    const { owner, key, release } = this.hold(request, header);
    try {
      const fingerprint = fingerprintHash(request)
        .update(bodies.get(request) ?? '')
        .digest('base64url');
      const earlier = findFirst ? await this.store.find(owner, key) : undefined;
      const kept = earlier ?? (await write({ owner, key, fingerprint, ttlMs: this.ttlMs }));
      return this.send(reply, kept, fingerprint, key);
    } finally {
      release();
    }
  }

  /**
   * A POST whose body streams (an import): the earlier answer once the body has been read through for its
   * fingerprint, or 422; else `write`, which feeds the body to `update` as it reads it and takes the claim
   * at the end. `drain` reads a body that only needs its fingerprint (the earlier answer's request).
   */
  async runStreamed(
    request: FastifyRequest,
    reply: FastifyReply,
    header: string,
    drain: (update: (chunk: Buffer) => void) => Promise<void>,
    write: (streamed: StreamedClaim) => Promise<KeptAnswer>,
  ): Promise<FastifyReply> {
    const { owner, key, release } = this.hold(request, header);
    try {
      const hash = fingerprintHash(request);
      let fingerprint: string | undefined;
      const finish = () => (fingerprint ??= hash.digest('base64url'));
      const update = (chunk: Buffer) => void hash.update(chunk);
      const earlier = await this.store.find(owner, key);
      if (earlier) await drain(update);
      const kept = earlier ?? (await write({ update, claim: () => ({ owner, key, fingerprint: finish(), ttlMs: this.ttlMs }) }));
      return this.send(reply, kept, finish(), key);
    } finally {
      release();
    }
  }

  /** Marks the key as running in this process; 409 when it is already. */
  private hold(request: FastifyRequest, header: string): { owner: string; key: string; release: () => void } {
    const owner = request.principal?.tokenId;
    // Every POST needs a token: a keyed route without one is a bug.
    if (owner === undefined) throw new Error(`${request.method} ${request.url}: Idempotency-Key on a route without a token`);
    const key = keyOf(header);
    const id = `${owner}\u0000${key}`;
    if (this.running.has(id)) {
      this.observer?.conflict('running');
      throw new HttpError(409, stillRunning(key));
    }
    this.running.add(id);
    return { owner, key, release: () => this.running.delete(id) };
  }

  private send(reply: FastifyReply, kept: KeptAnswer, fingerprint: string, key: string): FastifyReply {
    if (kept.fingerprint !== fingerprint) {
      this.observer?.conflict('another-request');
      throw new HttpError(422, usedForAnother(key));
    }
    if (kept.earlier) {
      this.observer?.replayed();
      reply.header('idempotent-replayed', 'true');
    }
    // JSON text with a JSON type is sent as it is: the same bytes as the first time.
    return reply.code(kept.status).headers(kept.headers).send(kept.body);
  }
}

/**
 * Deletes the answers whose IDEMPOTENCY_KEY_TTL has passed, at start and then every tenth of it (at most
 * every 10 minutes, at least every second), in the background of the server process (a retry finds none
 * past its time to live either way: expired answers are never replayed). Answers a function that stops it.
 */
export function sweepExpiredKeys(
  store: Pick<IdempotencyStore, 'deleteExpired'>,
  ttlMs: number,
  log: Pick<FastifyBaseLogger, 'warn' | 'debug'>,
): () => void {
  const sweep = async () => {
    try {
      const deleted = await store.deleteExpired();
      if (deleted > 0) log.debug({ deleted }, 'idempotency: expired keys deleted');
    } catch (error) {
      log.warn({ err: error }, 'idempotency: could not delete expired keys');
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), Math.min(600_000, Math.max(1000, ttlMs / 10))).unref();
  return () => clearInterval(timer);
}
