import { createHash, type Hash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import {
  EARLIER_ANSWER,
  SWEEP_BATCH,
  sweepExpired,
  type AnyOutcome,
  type IdempotencyStore,
  type KeyClaim,
  type KeyedKind,
  type KeyedWrite,
  type Outcomes,
} from '../store/idempotency.js';
import { HttpError } from './errors.js';
import { refuseRepeated } from './repeated-headers.js';

/**
 * Idempotency-Key on every POST (docs/idempotency.md), the HTTP side of it; the store's side, and the
 * words (key, claim, outcome, replay), are store/idempotency.ts. The first request with a key runs: its
 * write is made under a claim on the key, and the write's outcome is kept with it, in one transaction;
 * the route answers from the outcome. A later request with the same key and the same request (method,
 * path and query, the headers that change what a POST does, the body: its fingerprint) is a replay: the
 * route answers from the same outcome by the same function, so the same bytes, with
 * `Idempotent-Replayed: true`, and nothing is written again. The same key with another request is 422;
 * while the first is still running, 409. Keys are the owner's (the token's, the JWT subject's). A
 * request refused before its write (validation, auth, limits, an unavailable store) keeps nothing. A POST
 * without the header pays for one header lookup and nothing else.
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
  return `Idempotency-Key ${JSON.stringify(key)} was used for another request (another method, path, query, If-Match, If-None-Match, Prefer or body): send a new key with a new request`;
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
  const hash = createHash('sha256').update(
    `${request.method}\n${request.url}\n${headers['content-type'] ?? ''}\n${headers['if-match'] ?? ''}\n${headers['if-none-match'] ?? ''}\n`,
  );
  // Prefer (handling=strict refuses what lenient ignores) only when sent: the fingerprints of requests
  // without it stay those an earlier release kept.
  const prefer = headers.prefer;
  return prefer === undefined ? hash : hash.update(`prefer:${String(prefer)}\n`);
}

/** The answer header of a replay, as the OpenAPI document shows it on every POST's success. */
export const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    description:
      '`true` on the answer to a request made before with this Idempotency-Key, sent again: nothing was done again (any status may come so)',
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

/**
 * A route's answer to a write's outcome: sets the reply's status and headers and sends its body (by the
 * route's own serializer), or throws the HttpError of the refusal the write decided (the error handler's
 * shape). One function per route, for the answer without a key, the first answer with one and every
 * replay alike, so that they are the same bytes. It may read the request too (a replay's is the same
 * request: the fingerprint says so).
 */
export type Answer<K extends KeyedKind> = (outcome: Outcomes[K]) => FastifyReply;

/** A write whose body streams (an import): read for its fingerprint alone (`drain`), or staged and committed under the key (`write`). */
export interface StreamedWrite<K extends KeyedKind> {
  kind: K;
  drain: (update: (chunk: Buffer) => void) => Promise<void>;
  /** Feeds each chunk to `update` as it reads it, then commits by `underKey` (once the fingerprint is whole). */
  write: (update: (chunk: Buffer) => void, underKey: (write: Extract<KeyedWrite, { kind: K }>) => Promise<AnyOutcome>) => Promise<AnyOutcome>;
}

/** The keys of one app: which run now (409) in this process, and how their writes are made and answered. */
export class Idempotency {
  private readonly running = new Set<string>();

  constructor(
    readonly store: IdempotencyStore,
    private readonly ttlMs: number,
    private readonly observer?: IdempotencyObserver,
  ) {}

  /**
   * A POST whose request is whole (a JSON body, or none) under its key: the store makes the write and
   * keeps its outcome, or finds the earlier outcome instead (in its transaction); 422 when that was
   * another request's; then `answer`. A write given as a function (its own checks, a URL's DNS, must not
   * run again for a retry) is made only once no outcome was found under the key; it may refuse (a 400,
   * which keeps nothing).
   */
  async run<W extends KeyedWrite>(
    request: FastifyRequest,
    reply: FastifyReply,
    header: string,
    write: W | (() => Promise<W>),
    answer: Answer<W['kind']>,
  ): Promise<FastifyReply> {
    const { owner, key, release } = this.hold(request, header);
    try {
      const fingerprint = fingerprintHash(request)
        .update(bodies.get(request) ?? '')
        .digest('base64url');
      const claim: KeyClaim = { owner, key, fingerprint, ttlMs: this.ttlMs };
      const earlier = typeof write === 'function' ? await this.store.find(owner, key) : undefined;
      const kept = earlier ?? (await this.store.write(claim, typeof write === 'function' ? await write() : write));
      return this.answer(reply, kept, fingerprint, key, answer);
    } finally {
      release();
    }
  }

  /**
   * A POST whose body streams (an import): the earlier outcome once the body has been read through for
   * its fingerprint (`drain`), or 422; else `write`, which reads and stages the body and commits under
   * the key at the end.
   */
  async runStreamed<K extends KeyedKind>(
    request: FastifyRequest,
    reply: FastifyReply,
    header: string,
    { drain, write }: StreamedWrite<K>,
    answer: Answer<K>,
  ): Promise<FastifyReply> {
    const { owner, key, release } = this.hold(request, header);
    try {
      const hash = fingerprintHash(request);
      let fingerprint: string | undefined;
      const finish = () => (fingerprint ??= hash.digest('base64url'));
      const update = (chunk: Buffer) => void hash.update(chunk);
      const earlier = await this.store.find(owner, key);
      if (earlier) await drain(update);
      const kept = earlier ?? (await write(update, (made) => this.store.write({ owner, key, fingerprint: finish(), ttlMs: this.ttlMs }, made)));
      return this.answer(reply, kept, finish(), key, answer);
    } finally {
      release();
    }
  }

  /** Marks the key as running in this process; 409 when it is already. */
  private hold(request: FastifyRequest, header: string): { owner: string; key: string; release: () => void } {
    const owner = request.principal?.tokenId;
    // Every POST needs a token: a keyed route without one is a bug.
    if (owner === undefined) throw new Error(`${request.method} ${request.url}: Idempotency-Key on a route without a token`);
    refuseRepeated(request, 'idempotency-key');
    const key = keyOf(header);
    const id = `${owner}\u0000${key}`;
    if (this.running.has(id)) {
      this.observer?.conflict('running');
      throw new HttpError(409, stillRunning(key));
    }
    this.running.add(id);
    return { owner, key, release: () => this.running.delete(id) };
  }

  /** The route's answer to the outcome under the key, marked when replayed; 422 when it is another request's. */
  private answer<K extends KeyedKind>(reply: FastifyReply, kept: AnyOutcome, fingerprint: string, key: string, answer: Answer<K>): FastifyReply {
    if (kept.fingerprint !== fingerprint) {
      this.observer?.conflict('another-request');
      throw new HttpError(422, usedForAnother(key));
    }
    if (kept.replayed) {
      this.observer?.replayed();
      reply.header('idempotent-replayed', 'true');
    }
    if (kept.kind === EARLIER_ANSWER) return sendEarlierAnswer(reply, kept.outcome);
    // The same request (the fingerprint), so the same route's write: its kind's outcome.
    return answer(kept.outcome as Outcomes[K]);
  }
}

/**
 * An answer kept by a release before outcomes (store/idempotency.ts: EarlierAnswer), sent as it was kept:
 * JSON text with a JSON type is sent as it is, the same bytes as the first time. Gone once the last of
 * them has expired (IDEMPOTENCY_KEY_TTL after the upgrade, 30 days at most).
 */
function sendEarlierAnswer(reply: FastifyReply, kept: unknown): FastifyReply {
  const { status, headers, body } = kept as { status: number; headers: Record<string, string>; body: string };
  return reply.code(status).headers(headers).send(body);
}

/**
 * Deletes the outcomes whose IDEMPOTENCY_KEY_TTL has passed, at start and then every tenth of it (at most
 * every 10 minutes, at least every second), in the background of the server process (a retry finds none
 * past its time to live either way: expired outcomes are never replayed). A batch at a time
 * (store/idempotency.ts: sweepExpired), so that writes wait for no more than one batch; a sweep still
 * running when the next is due is not doubled. Answers a function that stops it.
 */
export function sweepExpiredKeys(
  store: Pick<IdempotencyStore, 'deleteExpired'>,
  ttlMs: number,
  log: Pick<FastifyBaseLogger, 'warn' | 'debug'>,
): () => void {
  let sweeping = false;
  // Stopping ends a sweep under way too, after its batch: the store is closed next.
  const stopping = new AbortController();
  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      const { deleted, batches } = await sweepExpired(store, SWEEP_BATCH, stopping.signal);
      if (deleted > 0) log.debug({ deleted, batches }, 'idempotency: expired keys deleted');
    } catch (error) {
      if (!stopping.signal.aborted) log.warn({ err: error }, 'idempotency: could not delete expired keys');
    } finally {
      sweeping = false;
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), Math.min(600_000, Math.max(1000, ttlMs / 10))).unref();
  return () => {
    stopping.abort();
    clearInterval(timer);
  };
}
