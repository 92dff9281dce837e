import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../model/principal.js';
import { EARLIER_ANSWER, type KeyClaim } from '../store/idempotency.js';
import type { Store } from '../store/store.js';
import type { Inputs, KeptOutcome, Outcomes, Write, WriteKind } from '../store/writes.js';
import { sendEarlierAnswer } from './earlier-answers.js';
import { Fingerprint } from './fingerprint.js';
import { keyOf, stillRunning, usedForAnother, type IdempotencyObserver } from './idempotency.js';
import { refuseRepeated } from './repeated-headers.js';

/**
 * The one way in of every write a POST makes (docs/design.md: a write is a value). The route builds the
 * write (writeOf: its kind and input, the principal, the Idempotency-Key if one came and the request's
 * fingerprint) and hands it to `apply` with the function that renders its kind's outcome. Without a key
 * the store makes the write and the route renders its outcome. With one, the same write is made under a
 * claim on the key: the store keeps its outcome with it in its transaction, or finds the key's earlier
 * outcome instead, which is rendered by the same function, so the same bytes, with
 * `Idempotent-Replayed: true`, and nothing is done again. The same key with another request (another
 * fingerprint) is 422; while the first is still running in this process, 409. Keys are the owner's (the
 * token's, the JWT subject's). A request refused before its write (validation, auth, limits, an
 * unavailable store) keeps nothing.
 */

/**
 * An input made only once its write is to be made, never for a replay: a webhook URL's check (its DNS)
 * must not run again for a retry; an import's rows are read and staged, then committed within `make`.
 */
export class Deferred<I> {
  constructor(
    /** Makes the input and hands it to `write`, answering what that answers (an import's staged rows last as long as it runs). */
    readonly make: <T>(write: (input: I) => Promise<T>) => Promise<T>,
    /** What a replay does instead: an import's body read through, for its fingerprint and its warnings. */
    readonly skip?: () => Promise<void>,
  ) {}
}

/** What a route gives as a write's input: the input, or a Deferred one. */
type InputOf<K extends WriteKind> = Inputs[K] | Deferred<Inputs[K]>;

/** A write as a request makes it: the store's write (its kind and input), who makes it, its key if one came, and what the request is. */
export interface RequestWrite<K extends WriteKind = WriteKind, I extends InputOf<K> = Inputs[K]> {
  readonly kind: K;
  readonly input: I;
  readonly principal: Principal | null;
  /** The Idempotency-Key header as sent (validated by the route's schema); undefined: the write is made without a claim. */
  readonly key: string | undefined;
  /** The request's fingerprint (http/fingerprint.ts) when a key came; a streamed body is added to it as it is read. */
  readonly fingerprint: Fingerprint | null;
}

/**
 * A route's answer to its write's outcome: sets the reply's status and headers and sends its body (by the
 * route's own serializer), or throws the HttpError of the refusal the write decided (the error handler's
 * shape). One function per kind of write, for the answer without a key, the first answer with one and
 * every replay alike. It may read the write too: a replay's is the same request (its fingerprint says so).
 */
export type Render<K extends WriteKind, I extends InputOf<K> = Inputs[K]> = (
  reply: FastifyReply,
  outcome: Outcomes[K],
  write: RequestWrite<K, I>,
) => FastifyReply;

/** The write a request makes: of this kind, with this input, by the request's principal, under its key if it sent one. */
export function writeOf<K extends WriteKind, I extends InputOf<K>>(request: FastifyRequest, kind: K, input: I): RequestWrite<K, I> {
  // Validated by every POST's headers schema (IdempotencyKeyHeaders): one value, a string.
  const key = request.headers['idempotency-key'] as string | undefined;
  // A request without a JSON body (or with a streamed one) begins its fingerprint here.
  const fingerprint = key === undefined ? null : (request.fingerprint ??= new Fingerprint(request));
  return { kind, input, principal: request.principal, key, fingerprint };
}

/** The writes of one app: the store they are made in, how long outcomes are kept, and which keys run now in this process (409). */
export class Writes {
  private readonly running = new Set<string>();

  constructor(
    private readonly store: Pick<Store, 'writes' | 'idempotency'>,
    /** IDEMPOTENCY_KEY_TTL. */
    private readonly ttlMs: number,
    private readonly observer?: IdempotencyObserver,
  ) {}

  /** Makes the write (under its key, when it has one) and answers its outcome by `render`. */
  async apply<K extends WriteKind, I extends InputOf<K>>(
    reply: FastifyReply,
    write: RequestWrite<K, I>,
    render: Render<K, I>,
  ): Promise<FastifyReply> {
    if (write.key === undefined) {
      const { input } = write;
      const outcome =
        input instanceof Deferred
          ? await input.make((made: Inputs[K]) => this.store.writes.apply({ kind: write.kind, input: made }))
          : await this.store.writes.apply(write as unknown as Write<K>);
      return render(reply, outcome, write);
    }
    const owner = write.principal?.tokenId;
    const { request } = reply;
    // Every POST needs a token: a keyed route without one is a bug.
    if (owner === undefined) throw new Error(`${request.method} ${request.url}: Idempotency-Key on a route without a token`);
    refuseRepeated(request, 'idempotency-key');
    const key = keyOf(write.key);
    const running = `${owner}\u0000${key}`;
    if (this.running.has(running)) {
      // Beside another request of the key: a retry of one answered already (the other reading that answer
      // too) gets the answer kept; only a key whose first request has not finished is 409.
      const earlier = await this.store.idempotency.find(owner, key);
      if (earlier !== undefined) {
        if (write.input instanceof Deferred) await write.input.skip?.();
        return this.answer(reply, earlier as KeptOutcome<K>, write, key, render);
      }
      this.observer?.conflict('running');
      throw stillRunning(key);
    }
    this.running.add(running);
    try {
      return this.answer(reply, await this.keptUnder(owner, key, write), write, key, render);
    } finally {
      this.running.delete(running);
    }
  }

  /**
   * The write made under a claim on the key, or the key's earlier outcome: the store's look, in the write's
   * transaction. A deferred input is made only once no outcome was found under the key (it may refuse, a
   * 400 that keeps nothing); the claim, with the fingerprint, is made once its body is whole.
   */
  private async keptUnder<K extends WriteKind>(owner: string, key: string, write: RequestWrite<K, InputOf<K>>): Promise<KeptOutcome<K>> {
    const { input, fingerprint } = write;
    const claim = (): KeyClaim => ({ owner, key, fingerprint: fingerprint!.digest(), ttlMs: this.ttlMs });
    if (!(input instanceof Deferred)) return this.store.writes.apply(write as unknown as Write<K>, claim());
    const earlier = await this.store.idempotency.find(owner, key);
    if (earlier === undefined) return input.make((made: Inputs[K]) => this.store.writes.apply({ kind: write.kind, input: made }, claim()));
    await input.skip?.();
    return earlier as KeptOutcome<K>;
  }

  /** The route's answer to the outcome under the key, marked when replayed; 422 when it is another request's. */
  private answer<K extends WriteKind, I extends InputOf<K>>(
    reply: FastifyReply,
    kept: KeptOutcome<K>,
    write: RequestWrite<K, I>,
    key: string,
    render: Render<K, I>,
  ): FastifyReply {
    if (kept.fingerprint !== write.fingerprint!.digest()) {
      this.observer?.conflict('another-request');
      throw usedForAnother(key);
    }
    if (kept.replayed) {
      this.observer?.replayed();
      reply.header('idempotent-replayed', 'true');
    }
    if (kept.kind === EARLIER_ANSWER) return sendEarlierAnswer(reply, kept.outcome);
    // The same request (the fingerprint), so the same route's write: its kind's outcome.
    return render(reply, kept.outcome as Outcomes[K], write);
  }
}
