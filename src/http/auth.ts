import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import type { Scope } from '../model/scopes.js';
import type { Principal } from '../model/principal.js';
import type { TokenVerifier, Verdict } from '../auth/tokens.js';
import { ACCESS_TOKEN_NOT_TAKEN } from './access-token.js';
import { HttpError } from './errors.js';
import { repeatedAuthorization } from './repeated-headers.js';

/**
 * What a route needs of its caller: a token with this scope, any valid token whatever its scopes ("token":
 * GET /token, which tells a token's holder what it may do), or nothing ("public"). Every route says.
 */
export type RouteAuth = Scope | 'token' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required of every route (requireRouteAuth refuses a route without it). */
    auth?: RouteAuth;
    /** Answered even while the service sheds load (http/overload.ts): /healthz. */
    servesWhenOverloaded?: boolean;
    /** A health or readiness probe: never rate limited (http/rate-limit.ts). */
    probe?: boolean;
    /**
     * The token may come as the `access_token` query parameter (RFC 6750 §2.3) instead of the header: for
     * a browser's EventSource, which cannot send headers (GET /events).
     */
    tokenInQuery?: boolean;
  }
  interface FastifyRequest {
    /** Who sent the request, once authenticated; null on public routes. */
    principal: Principal | null;
  }
}

/**
 * Secure by default: a route that does not say who may call it is a bug, caught when it is registered.
 * Every route registered is also handed to `collect` (the OpenAPI document is made from them).
 */
export function requireRouteAuth(app: FastifyInstance, collect: (route: RouteOptions) => void): void {
  app.decorateRequest('principal', null);
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === undefined) throw new Error(`route ${String(route.method)} ${route.url} has no auth setting`);
    collect(route);
  });
}

const REALM = 'Bearer realm="plant-store"';
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

function unauthorized(message: string, tokenSent: boolean): HttpError {
  return new HttpError('unauthorized', message, {
    headers: { 'www-authenticate': tokenSent ? `${REALM}, error="invalid_token", error_description="${message}"` : REALM },
  });
}

/** The 401 of a request without a token, and the 403 of a token without the scope (the OpenAPI document's examples too). */
export const MISSING_TOKEN = 'missing bearer token: send Authorization: Bearer <token>';
export function lacksScope(scope: Scope): string {
  return `this token lacks the scope ${scope} that this operation needs`;
}

/** A 403 for scopes the token lacks; WWW-Authenticate names them (space-separated, RFC 6750 §3). */
export function insufficientScope(
  scopes: readonly Scope[],
  message: string,
  code: 'forbidden' | 'scope_not_grantable' | 'token_manages_only' = 'forbidden',
): HttpError {
  const scope = scopes.length > 0 ? `, scope="${scopes.join(' ')}"` : '';
  return new HttpError(code, message, {
    headers: { 'www-authenticate': `${REALM}, error="insufficient_scope"${scope}` },
    ...(code === 'scope_not_grantable' && { field: 'body.scopes' }),
  });
}

/**
 * How authentication ends: with the error the request has earned, if any, and the principal of a token
 * found valid but refused all the same (403: a scope it lacks, or a full-scope token in the URL), so that
 * the rate limit counts that refusal against its token (http/rate-limit.ts). Fastify's own `done` takes
 * the first argument only.
 */
export type AuthDone = (error?: Error, refused?: Principal) => void;

/** The authentication hook, as rate-limit.ts wraps it. */
export type AuthHook = (request: FastifyRequest, reply: FastifyReply, done: AuthDone) => void;

/**
 * The authentication hook, run on every request in onRequest: before the body is read, so an
 * unauthenticated caller learns nothing about validation. The route's config says what it needs.
 */
export function authHook(verifier: TokenVerifier): AuthHook & onRequestHookHandler {
  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: AuthDone) {
    const { auth: needed, tokenInQuery } = request.routeOptions.config;
    // Only the not-found handler has no auth setting (requireRouteAuth refuses to register a route without one).
    if (needed === undefined || needed === 'public') return done();
    let header = request.headers.authorization;
    let inUrl = false;
    if (tokenInQuery) {
      const inQuery = (request.query as Record<string, unknown>).access_token;
      if (inQuery !== undefined) {
        if (header !== undefined)
          return done(new HttpError('token_sent_twice', 'send the bearer token once: in the Authorization header or as access_token, not both'));
        if (typeof inQuery !== 'string') return done(unauthorized('malformed bearer token (access_token must be given once)', true));
        header = `Bearer ${inQuery}`;
        inUrl = true;
      }
    }
    if (header === undefined) {
      // The token sent as access_token to an operation that does not take it there: say so, not just "missing".
      const misplaced = !tokenInQuery && (request.query as Record<string, unknown>).access_token !== undefined;
      return done(unauthorized(misplaced ? `missing bearer token: ${ACCESS_TOKEN_NOT_TAKEN}` : MISSING_TOKEN, false));
    }
    // Node keeps the first of several Authorization headers: refused, so that no proxy reading the last disagrees.
    if (!inUrl) {
      const repeated = repeatedAuthorization(request.raw.rawHeaders);
      if (repeated !== undefined) return done(repeated);
    }
    const match = BEARER.exec(header);
    if (!match) {
      const isBearer = /^bearer(\s|$)/i.test(header);
      return done(
        isBearer ? unauthorized('malformed bearer token', true) : unauthorized('the Authorization header must use the Bearer scheme', false),
      );
    }
    const result = verifier.verify(match[1]!);
    // A closure only for the rare token that is not cached: this hook runs on every request.
    if (result instanceof Promise) result.then((verdict) => admit(request, needed, verdict, inUrl, done), done);
    else admit(request, needed, result, inUrl, done);
  };
}

/** The 403 of a token sent as access_token that may do more than read events (the OpenAPI document's example too). */
export const TOKEN_IN_URL_REFUSED =
  'access_token in the URL is accepted only for a token limited to events:read (for a browser, whose EventSource cannot send headers): ' +
  'send this token in the Authorization header';

/**
 * A token in the URL ends up in browser histories, proxy logs and Referer headers, so it is taken only
 * where a browser needs it and only if it can do nothing but read the change feed: a leaked one reveals
 * the feed and nothing more, and cannot write, here or elsewhere (a JWT's other scopes and audiences).
 */
function mayComeInUrl(principal: Principal): boolean {
  if (principal.grantsElsewhere === true) return false;
  return principal.scopes.length > 0 && principal.scopes.every((scope) => scope === 'events:read');
}

function admit(request: FastifyRequest, needed: Scope | 'token', verdict: Verdict, inUrl: boolean, done: AuthDone): void {
  if (typeof verdict === 'string') return done(unauthorized(verdict, true));
  if (needed !== 'token' && !verdict.scopes.includes(needed)) return done(insufficientScope([needed], lacksScope(needed)), verdict);
  if (inUrl && !mayComeInUrl(verdict)) return done(new HttpError('token_in_url_refused', TOKEN_IN_URL_REFUSED), verdict);
  request.principal = verdict;
  done();
}
