import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyReply, onRequestHookHandler } from 'fastify';
import type { AuthHook } from './auth.js';
import type { RateCounter } from '../store/store.js';
import { HttpError } from './errors.js';
import { TOKEN_PREFIX, WINDOW_MS, WindowCounts } from './rate-windows.js';

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
}

/** The key a token counts under. */
function tokenKey(tokenId: string): string {
  return `${TOKEN_PREFIX}${tokenId}`;
}

/** A process's counts in the current window, as one process hands them to the next (a reload: process/serving.ts). */
export interface RateCounts {
  window: number;
  counts: Array<[key: string, count: number]>;
}

/** The limiter of one process: the counts of the current window, dropped whole when the window turns. */
export class MemoryRateLimiter implements RateLimiter {
  private current = new WindowCounts(-1);

  constructor(
    private readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  hit(key: string): RateDecision {
    const now = this.now();
    const window = this.turn(now);
    return decision(this.limit, now, window, this.current.add(key, 1));
  }

  /** The counts of the current window (none once it has turned), for the process that takes over from this one. */
  counted(): RateCounts {
    const window = Math.floor(this.now() / WINDOW_MS);
    return { window, counts: window === this.current.window ? this.current.entries() : [] };
  }

  /**
   * Adds the counts another process made in the current window to this one's (those of a window that has
   * turned are dropped): a client's budget is not made whole again because the process serving it was replaced.
   */
  absorb({ window, counts }: RateCounts): void {
    if (window !== this.turn(this.now())) return;
    for (const [key, count] of counts) this.current.add(key, count);
  }

  /** The window `now` is in, the counts emptied when it is a new one. */
  private turn(now: number): number {
    const window = Math.floor(now / WINDOW_MS);
    if (window !== this.current.window) this.current = new WindowCounts(window);
    return window;
  }
}

/** The decision on one more request, `before` having been counted in the window already. */
function decision(limit: number, now: number, window: number, before: number): RateDecision {
  const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
  const remaining = Math.max(0, limit - before - 1);
  return { allowed: before + 1 <= limit, limit, remaining, resetSeconds };
}

/**
 * The limiter whose counts are kept outside the process: the same windows and answers as the in-memory
 * one, with the counts kept by the store (a PostgreSQL table: every instance on the database counts against
 * one limit) or, on SQLite with several workers, by their supervisor (process/rate-counts.ts).
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
    return decision(this.limit, now, window, count - 1);
  }
}

/**
 * The name of the one policy: every token (every address without one) has the same budget. The current
 * draft's fields (draft-ietf-httpapi-ratelimit-headers, 08 and later) name a policy, so that a client of
 * several could tell them apart.
 */
const POLICY = '"default"';

/** What a limit's answers repeat, as text: made once per limit, not per request. */
interface LimitTexts {
  /** RateLimit-Policy: the quota `q` of requests in each window of `w` seconds. */
  policy: string;
  /** The start of RateLimit, before the remaining budget: `"default";r=`. */
  budget: string;
  /** ratelimit-limit, the draft-06 field (deprecated). */
  limit: string;
}
const limitTexts = new Map<number, LimitTexts>();

function textsOf(limit: number): LimitTexts {
  let texts = limitTexts.get(limit);
  if (texts === undefined) {
    texts = { policy: `${POLICY};q=${limit};w=${WINDOW_MS / 1000}`, budget: `${POLICY};r=`, limit: String(limit) };
    limitTexts.set(limit, texts);
  }
  return texts;
}

/**
 * The fields of the request budget: the current draft's `RateLimit-Policy: "default";q=100;w=60` and
 * `RateLimit: "default";r=42;t=17` (structured fields, RFC 9651: the policy's quota and window, the
 * budget's remaining requests and seconds to its reset), and, until their sunset (docs/api.md), draft 06's
 * separate ratelimit-limit, -remaining and -reset, which clients written to it read. Draft 06's own
 * RateLimit-Policy (`100;w=60`) cannot be kept beside the current one: the field has the same name.
 */
function setHeaders(reply: FastifyReply, d: RateDecision): void {
  const texts = textsOf(d.limit);
  const remaining = String(d.remaining);
  const reset = String(d.resetSeconds);
  reply
    .header('ratelimit-policy', texts.policy)
    .header('ratelimit', `${texts.budget}${remaining};t=${reset}`)
    .header('ratelimit-limit', texts.limit)
    .header('ratelimit-remaining', remaining)
    .header('ratelimit-reset', reset);
}

/** Every field setHeaders sets. */
const BUDGET_FIELDS = ['ratelimit-policy', 'ratelimit', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'] as const;

/**
 * Takes the request budget's fields off an answer refused by another limit (a 429 for the event stream
 * cap): they would say requests are left where this request was refused, and a client reads a 429's
 * RateLimit as the reason. Its Retry-After and message say which limit it met.
 */
export function withoutRequestBudget(reply: FastifyReply): void {
  for (const field of BUDGET_FIELDS) reply.removeHeader(field);
}

/** The 429's message (the OpenAPI document's example is made by it too). */
export function tooManyMessage(who: 'token' | 'address', limit: number, resetSeconds: number): string {
  return `too many requests from this ${who}: the limit is ${limit} per minute; retry in ${resetSeconds} s`;
}

function tooMany(d: RateDecision, who: 'token' | 'address'): HttpError {
  return new HttpError('rate_limited', tooManyMessage(who, d.limit, d.resetSeconds), { headers: { 'retry-after': String(d.resetSeconds) } });
}

/**
 * The key a client address counts under: an IPv4 address as it is, an IPv6 address by its /64 (one
 * customer's network: a client can take any of its 2^64 addresses), an IPv4-mapped IPv6 address as IPv4.
 */
export function addressKey(ip: string): string {
  if (isIPv4(ip)) return `ip:${ip}`;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return `ip:${mapped[1]}`;
  if (!isIPv6(ip)) return `ip:${ip}`;
  const [head = '', tail = ''] = ip.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `ip6:${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * Counts one request for `key` and answers through `done`: its headers set, refused past the limit with
 * `who` named (or with `otherwise`, the error the request had already earned, when allowed). Synchronous
 * when the limiter is (the in-memory one): no promise and no closure on the hot path.
 */
function count(
  limiter: RateLimiter,
  key: string,
  who: 'token' | 'address',
  reply: FastifyReply,
  done: (error?: Error) => void,
  otherwise?: Error,
): void {
  const result = limiter.hit(key);
  if (!(result instanceof Promise)) {
    setHeaders(reply, result);
    return done(result.allowed ? otherwise : tooMany(result, who));
  }
  result.then((d) => {
    setHeaders(reply, d);
    done(d.allowed ? otherwise : tooMany(d, who));
  }, done);
}

/**
 * Rate limits, around the authentication hook, in one onRequest hook. Every request answered is counted,
 * once, before anything else is done for it (its body is not read yet), against whom it is known to come
 * from:
 * - a token found valid counts against that token only, whatever its address (behind a proxy every
 *   client may share one): the requests it may make, and those it is refused after authentication (403:
 *   a scope it lacks, a full-scope token in the URL);
 * - every other request counts against its client address (TRUST_PROXY decides which address that is; an
 *   IPv6 address by its /64): requests to public routes and to no route (404, 405), and requests whose
 *   token is missing, invalid, sent twice (400), or cannot be checked now (503: the identity provider's
 *   keys, the store).
 * Past the limit the answer is 429, whatever the request had earned otherwise. A token is always checked
 * before any refusal, so an anonymous flood cannot lock out a valid token. Health and readiness probes
 * (routes marked `probe`) are never counted nor refused.
 */
export function limitedAuthentication(limiter: RateLimiter, auth: AuthHook): onRequestHookHandler {
  return function limitedAuthentication(request, reply, done) {
    const { auth: needed, probe } = request.routeOptions.config;
    if (needed === 'public' || needed === undefined) {
      if (probe === true) return done();
      return count(limiter, addressKey(request.ip), 'address', reply, done);
    }
    auth(request, reply, (error, refused) => {
      const principal = request.principal ?? refused;
      if (principal !== null && principal !== undefined) return count(limiter, tokenKey(principal.tokenId), 'token', reply, done, error);
      count(limiter, addressKey(request.ip), 'address', reply, done, error);
    });
  };
}
