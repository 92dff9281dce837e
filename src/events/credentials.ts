import type { FastifyBaseLogger } from 'fastify';
import { TOKEN_CACHE_MS } from '../auth/tokens.js';
import type { Principal } from '../model/principal.js';
import type { TokenStore } from '../store/store.js';

/** What the watch needs of a stream: to be ended, with the reason said in a last comment line. */
export interface Endable {
  end(reason: string): void;
}

/**
 * How often open streams' tokens are checked again: as often as a request's token is (the verifier trusts
 * a stored token this long), so that a revocation reaches a stream as soon as it reaches new requests,
 * within a second. Never less often than the heartbeat.
 */
export const CREDENTIAL_CHECK_MS = TOKEN_CACHE_MS;

export const REVOKED = 'the token was revoked';
export const EXPIRED = 'the token has expired';

/**
 * A token is checked when a request arrives; an event stream lives on for hours. This watch checks the
 * token of every open stream again every CREDENTIAL_CHECK_MS and ends the streams whose token is no longer
 * good: a stored token once revoked (one read of the tokens table for all streams, whatever their number),
 * a JWT once past its `exp` (and the clock skew the verifier allows). Static tokens are configuration:
 * nothing at run time takes them back. It runs only while a stream with a stored token or a JWT is open.
 */
export class CredentialWatch {
  private readonly watched = new Map<Endable, Principal>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private failing = false;

  constructor(
    private readonly tokens: Pick<TokenStore, 'list'>,
    private readonly log: Pick<FastifyBaseLogger, 'warn' | 'info'>,
    private readonly everyMs: number = CREDENTIAL_CHECK_MS,
    private readonly now: () => number = Date.now,
  ) {}

  watch(stream: Endable, principal: Principal): void {
    if (principal.source === 'static') return;
    this.watched.set(stream, principal);
    this.timer ??= setInterval(() => void this.check(), this.everyMs).unref();
  }

  unwatch(stream: Endable): void {
    if (!this.watched.delete(stream) || this.watched.size > 0) return;
    this.stop();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Ends the streams whose token is no longer good. */
  async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const now = this.now();
      let stored = false;
      for (const [stream, principal] of this.watched) {
        if (principal.source === 'stored') stored = true;
        else if (principal.expiresAt !== undefined && principal.expiresAt <= now) this.end(stream, EXPIRED);
      }
      if (!stored) return;
      const active = await this.activeTokens();
      if (active === undefined) return;
      for (const [stream, principal] of this.watched) {
        if (principal.source === 'stored' && !active.has(principal.tokenId)) this.end(stream, REVOKED);
      }
    } finally {
      this.checking = false;
    }
  }

  private end(stream: Endable, reason: string): void {
    this.watched.delete(stream);
    stream.end(reason);
    if (this.watched.size === 0) this.stop();
  }

  /**
   * The ids of the tokens not revoked; undefined while the store cannot say. Streams then go on: the feed
   * cannot read new events from that store either, and a store back up is checked at the next turn.
   */
  private async activeTokens(): Promise<Set<string> | undefined> {
    try {
      const tokens = await this.tokens.list();
      if (this.failing) this.log.info('events: checking the tokens of open streams again');
      this.failing = false;
      return new Set(tokens.filter((token) => token.revokedAt === null).map((token) => token.id));
    } catch (error) {
      if (!this.failing) this.log.warn({ err: error }, 'events: cannot check the tokens of open streams against the store');
      this.failing = true;
      return undefined;
    }
  }
}
