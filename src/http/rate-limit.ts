import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateCounter } from '../store/store.js';
import { HttpError } from './errors.js';

/** What a limiter says of one request: allowed or not, and what the RateLimit headers tell the client. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/**
 * Counts requests per key in fixed one-minute windows. The interface allows an asynchronous
 * implementation, so that a limiter shared between instances (a PostgreSQL table, say) can replace
 * the in-memory one without touching the hooks.
 */
export interface RateLimiter {
  /** Counts one request for the key and decides on it. */
  hit(key: string): RateDecision | Promise<RateDecision>;
  /** Decides whether one more request would be allowed, without counting it. */
  peek(key: string): RateDecision | Promise<RateDecision>;
}

const WINDOW_MS = 60_000;
/** Keys tracked per window at most; beyond, new keys share one bucket, so that a flood of addresses cannot grow memory. */
const MAX_KEYS = 100_000;

/** The limiter of one process: a Map per window, dropped whole when the window turns. */
export class MemoryRateLimiter implements RateLimiter {
  private window = -1;
  private counts = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  hit(key: string): RateDecision {
    return this.decide(key, true);
  }

  peek(key: string): RateDecision {
    return this.decide(key, false);
  }

  private decide(key: string, count: boolean): RateDecision {
    const now = this.now();
    const window = Math.floor(now / WINDOW_MS);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    const bucket = this.counts.has(key) || this.counts.size < MAX_KEYS ? key : '(overflow)';
    const before = this.counts.get(bucket) ?? 0;
    if (count) this.counts.set(bucket, before + 1);
    return decision(this.limit, now, window, before, count);
  }
}

function decision(limit: number, now: number, window: number, before: number, counted: boolean): RateDecision {
  const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
  const remaining = Math.max(0, limit - before - (counted ? 1 : 0));
  return { allowed: before + 1 <= limit, limit, remaining, resetSeconds };
}

/**
 * The limiter shared by every instance on one database: the same windows and answers as the
 * in-memory one, with the counts kept by the store (a PostgreSQL table).
 */
export class SharedRateLimiter implements RateLimiter {
  constructor(
    private readonly limit: number,
    private readonly counter: RateCounter,
    private readonly now: () => number = Date.now,
  ) {}

  async hit(key: string): Promise<RateDecision> {
    const now = this.now();
    const window = Math.floor(now / WINDOW_MS);
    const count = await this.counter.hit(key, window);
    return decision(this.limit, now, window, count - 1, true);
  }

  async peek(key: string): Promise<RateDecision> {
    const now = this.now();
    const window = Math.floor(now / WINDOW_MS);
    return decision(this.limit, now, window, await this.counter.peek(key, window), false);
  }
}

function setHeaders(reply: FastifyReply, d: RateDecision): void {
  // IETF draft-ietf-httpapi-ratelimit-headers (the separate-field form of its earlier revisions, which
  // clients widely read), and the policy: so many requests per 60 s window.
  reply.headers({
    'ratelimit-limit': String(d.limit),
    'ratelimit-remaining': String(d.remaining),
    'ratelimit-reset': String(d.resetSeconds),
    'ratelimit-policy': `${d.limit};w=${WINDOW_MS / 1000}`,
  });
}

function tooMany(d: RateDecision, who: string): HttpError {
  return new HttpError(429, `too many requests from this ${who}: the limit is ${d.limit} per minute; retry in ${d.resetSeconds} s`, {
    'retry-after': String(d.resetSeconds),
  });
}

function settle(result: RateDecision | Promise<RateDecision>, then: (d: RateDecision) => void, fail: (e: Error) => void): void {
  if (result instanceof Promise) result.then(then, fail);
  else then(result);
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

/**
 * Rate limits: per token for authenticated requests, per client address for the rest. An address
 * counts its requests without a token (public routes included) and its failed authentications; once
 * over the limit it is refused 429 before any token is checked, which stops token guessing from it.
 * `beforeAuth` and `afterAuth` are onRequest hooks registered around the authentication hook.
 */
export function rateLimitHooks(limiter: RateLimiter): { beforeAuth: Hook; afterAuth: Hook; onResponse: Hook } {
  const byAddress = (request: FastifyRequest) => `ip:${request.ip}`;
  return {
    beforeAuth(request, reply, done) {
      const anonymous = request.routeOptions.config.auth === 'public' || request.headers.authorization === undefined;
      settle(
        anonymous ? limiter.hit(byAddress(request)) : limiter.peek(byAddress(request)),
        (d) => {
          if (anonymous) setHeaders(reply, d);
          done(d.allowed ? undefined : tooMany(d, 'address'));
        },
        done,
      );
    },
    afterAuth(request, reply, done) {
      const principal = request.principal;
      if (principal === null) return done();
      settle(
        limiter.hit(`token:${principal.tokenId}`),
        (d) => {
          setHeaders(reply, d);
          done(d.allowed ? undefined : tooMany(d, 'token'));
        },
        done,
      );
    },
    // A failed authentication counts against the address.
    onResponse(request, reply, done) {
      if (reply.statusCode !== 401 || request.headers.authorization === undefined) return done();
      settle(
        limiter.hit(byAddress(request)),
        () => done(),
        () => done(),
      );
    },
  };
}
