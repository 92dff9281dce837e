import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { newToken } from '../auth/tokens.js';
import { insufficientScope, lacksScope } from '../http/auth.js';
import { bothNamesRefused } from '../http/deprecation.js';
import {
  checkWriteIfMatch,
  NOT_MODIFIED,
  READ_PRECONDITION_FAILED,
  revalidationHeaders,
  sendResourceRevalidated,
  sendSerializedRevalidated,
  vary,
  WRITE_PRECONDITION_FAILED,
} from '../http/caching.js';
import { errorResponses, HttpError, NoContent } from '../http/errors.js';
import { KEY_STATUSES } from '../http/idempotency.js';
import { example } from '../http/error-codes.js';
import { writeOf, type RequestWrite, type Writes } from '../http/writes.js';
import type { Outcomes } from '../store/writes.js';
import { nextPage, startAfter, type PageLinkForm } from '../http/cursors.js';
import { nextLinkHeader, nextPageLink } from '../http/paging.js';
import { DuplicateTokenNameError, type TokenRecord, type TokenStore } from '../store/store.js';
import {
  cannotGrant,
  lackedScopes,
  MANAGES_ONLY,
  managesOnly,
  notFound,
  REVOKED_ALREADY_EXAMPLE,
  REVOKING_ITSELF_EXAMPLE,
  revokedAlready,
  revokingItself,
} from './rules.js';
import {
  CreatedToken,
  KeyedHeaders,
  NewToken,
  PAGE_LIMIT_DEFAULT,
  ReadHeaders,
  RevokeHeaders,
  RevokeQuery,
  Token,
  TOKEN_LIST_RENAMED,
  TokenIdParams,
  TokenInfo,
  TokenListQuery,
} from './schema.js';

/** The 400 of an `after` (or a cursor) that names no token. */
function afterNamesNone(parameter: 'after' | 'cursor' = 'after'): HttpError {
  return new HttpError('invalid_cursor', `querystring.${parameter} names no token: give the id of the last token of the previous page, or its Link`, {
    field: `querystring.${parameter}`,
  });
}

export interface TokenRouteOptions {
  tokens: TokenStore;
  /** PAGE_LINKS (http/cursors.ts). */
  pageLinks?: PageLinkForm;
  /**
   * The tokens this service also accepts that are not stored, and so neither listed nor revoked here:
   * `static` when PLANT_STORE_TOKENS holds any, `jwt` when a JWT key is configured. GET /tokens says so.
   */
  unlisted: ReadonlyArray<'static' | 'jwt'>;
  /** The write of POST /tokens, with an Idempotency-Key or without (http/writes.ts). */
  writes: Writes;
  /**
   * Told of each token revoked here, so that this app, and the other workers of its instance, refuse it from
   * their next request (other instances within a second): the answer waits for it.
   */
  revoked?: (tokenId: string) => void | Promise<void>;
}

/**
 * POST /tokens's answer to what its write did, without an Idempotency-Key, with one and on every replay
 * of it: 201 with the token and its secret, or the 409 of a name an active token has.
 */
function answerCreated(reply: FastifyReply, made: Outcomes['createToken'], { input }: RequestWrite<'createToken'>): FastifyReply {
  if (made === 'name-taken') throw new HttpError('token_name_taken', new DuplicateTokenNameError(input.token.name).message, { field: 'body.name' });
  const created: CreatedToken = { ...tokenView(made.token), secret: made.secret };
  return reply.code(201).header('location', `/tokens/${made.token.id}`).send(created);
}

/** A stored token as the API shows it: never its hash (the store's record has none; this keeps it so). */
function tokenView({ id, name, scopes, createdAt, revokedAt }: TokenRecord): Token {
  return { id, name, scopes: [...scopes], createdAt, revokedAt };
}

/** The reads' caching headers: a weak ETag of the answer (tokens have no version), revalidated. */
const CACHING = revalidationHeaders('weak');
/** One stored token's: a strong ETag, which If-Match on its revocation names. */
const RESOURCE_CACHING = revalidationHeaders('resource');
/** GET /token's: the answer depends on the token sent. */
const TOKEN_CACHING = revalidationHeaders('weak', ['Authorization']);

const UNLISTED_HEADER = {
  'Unlisted-Token-Sources': {
    description:
      "The tokens the service also accepts that this list does not hold, since they are not stored and cannot be revoked here: `static` (PLANT_STORE_TOKENS, configuration) and `jwt` (an identity provider's), comma-separated; absent when neither is configured",
    schema: { type: 'string' },
  },
};

/**
 * Bearer tokens over the API: the one a request carries (GET /token, any valid token), and the stored
 * ones, listed, made and revoked with the `tokens:manage` scope (as the CLI's `token` commands do on the
 * store). A token makes only tokens within its own scopes (rules.ts), and revokes itself only when it says so.
 */
export const tokenRoutes: FastifyPluginCallbackTypebox<TokenRouteOptions> = (
  app,
  { tokens, unlisted, writes, revoked, pageLinks = 'signed' },
  done,
) => {
  const auth = 'tokens:manage' as const;

  app.get(
    '/token',
    {
      config: { auth: 'token' },
      schema: {
        operationId: 'readToken',
        tags: ['tokens'],
        summary: 'The bearer token of this request: its id and its scopes',
        headers: ReadHeaders,
        response: { 200: TokenInfo, 304: NoContent, ...errorResponses(401, 412, 503) },
        responseDescriptions: { 200: 'The token', 304: NOT_MODIFIED },
        responseHeaders: { 200: TOKEN_CACHING, 304: TOKEN_CACHING },
        errorExamples: [READ_PRECONDITION_FAILED],
      },
    },
    async (request, reply) => {
      // The auth hook has verified the token of every request that reaches this handler.
      const { tokenId, scopes } = request.principal!;
      const info: TokenInfo = { id: tokenId, scopes: [...scopes] };
      // The answer is the token's own: another Authorization, another answer.
      return sendSerializedRevalidated(request, vary(reply, 'Authorization'), info);
    },
  );

  app.get(
    '/tokens',
    {
      config: { auth, renamedQuery: TOKEN_LIST_RENAMED },
      schema: {
        operationId: 'listTokens',
        tags: ['tokens'],
        summary: 'Lists the stored tokens, oldest first, a page at a time (Link: rel="next" when more remain); never a secret',
        description:
          'Stored tokens only, active and revoked: static tokens (PLANT_STORE_TOKENS) are configuration and JWTs belong to the identity provider, so neither is listed nor revoked here; the Unlisted-Token-Sources header says which of them this service accepts.',
        querystring: TokenListQuery,
        headers: ReadHeaders,
        response: { 200: Type.Array(Token), 304: NoContent, ...errorResponses(400, 401, 403, 412, 503) },
        responseDescriptions: { 200: 'A page of tokens', 304: NOT_MODIFIED },
        responseHeaders: { 200: { ...nextLinkHeader('tokens'), ...UNLISTED_HEADER, ...CACHING }, 304: CACHING },
        errorExamples: [afterNamesNone(), bothNamesRefused('state', 'status'), READ_PRECONDITION_FAILED],
      },
    },
    async (request, reply) => {
      // A deprecated `state` has been taken as `status` (http/deprecation.ts).
      const { status, limit = PAGE_LIMIT_DEFAULT } = request.query;
      const after = startAfter(request.query, 'tokens', status ?? '', 'status');
      // Tokens are few (people make them), so a page is cut from the whole list, read as the CLI reads it.
      const all = await tokens.list();
      let start = 0;
      if (after !== undefined) {
        start = all.findIndex((token) => token.id === after) + 1;
        if (start === 0) throw afterNamesNone(request.query.cursor === undefined ? 'after' : 'cursor');
      }
      const selected = all.slice(start).filter((token) => status === undefined || (status === 'active') === (token.revokedAt === null));
      if (selected.length > limit) {
        selected.length = limit;
        reply.header('link', nextPageLink(request, nextPage(pageLinks, 'tokens', status ?? '', selected[limit - 1]!.id)));
      }
      if (unlisted.length > 0) reply.header('unlisted-token-sources', unlisted.join(', '));
      return sendSerializedRevalidated(request, reply, selected.map(tokenView));
    },
  );

  app.post(
    '/tokens',
    {
      config: { auth },
      schema: {
        operationId: 'createToken',
        tags: ['tokens'],
        summary: 'Makes a token with some of the scopes of the token making it (its secret is in this answer only)',
        description:
          'The token can grant only scopes it holds itself, and `tokens:manage` alone makes nothing (a token holding no other scope makes no token). A name an active token has is refused (409).',
        body: NewToken,
        bodyExample: { name: 'reporting', scopes: ['plants:read'] },
        headers: KeyedHeaders,
        response: { 201: CreatedToken, ...errorResponses(400, 401, 403, 409, 413, 415, 503, ...KEY_STATUSES) },
        responseDescriptions: {
          201: 'The token, with its secret',
          403: 'Error response: the token lacks tokens:manage, or a scope it asks to grant (the message names each)',
          409: 'Error response: an active token has this name, nothing made; or a request with the same Idempotency-Key still runs',
        },
        errorExamples: [
          example('validation_failed', 'body.scopes must not be empty', 'body.scopes'),
          example('validation_failed', 'body.name must be at most 64 characters long', 'body.name'),
          example('forbidden', lacksScope(auth)),
          example('scope_not_grantable', cannotGrant(['webhooks:manage', 'events:read']), 'body.scopes'),
          example('token_manages_only', MANAGES_ONLY),
          example('token_name_taken', new DuplicateTokenNameError('reporting').message, 'body.name'),
        ],
        responseHeaders: {
          201: { Location: { description: 'The URL of the token made', schema: { type: 'string' } } },
        },
      },
    },
    async (request, reply) => {
      const { name, scopes } = request.body;
      const maker = request.principal!;
      if (managesOnly(maker)) throw insufficientScope([], MANAGES_ONLY, 'token_manages_only');
      const lacked = lackedScopes(maker, scopes);
      if (lacked.length > 0) throw insufficientScope(lacked, cannotGrant(lacked), 'scope_not_grantable');
      return writes.apply(reply, writeOf(request, 'createToken', newToken(name, scopes)), answerCreated);
    },
  );

  app.get(
    '/tokens/:id',
    {
      config: { auth },
      schema: {
        operationId: 'getToken',
        tags: ['tokens'],
        summary: 'Reads a stored token, active or revoked; never its secret',
        params: TokenIdParams,
        headers: ReadHeaders,
        response: { 200: Token, 304: NoContent, ...errorResponses(401, 403, 404, 412, 503) },
        responseDescriptions: { 200: 'The token', 304: NOT_MODIFIED },
        responseHeaders: { 200: RESOURCE_CACHING, 304: RESOURCE_CACHING },
        errorExamples: [
          example('not_found', notFound('3f9a1c07b2e4')),
          example('not_found', notFound('static:0a1b2c3d4e5f')),
          READ_PRECONDITION_FAILED,
        ],
      },
    },
    async (request, reply) => {
      const token = await tokens.get(request.params.id);
      if (!token) throw new HttpError('not_found', notFound(request.params.id));
      return sendResourceRevalidated(request, reply, tokenView(token));
    },
  );

  app.delete(
    '/tokens/:id',
    {
      config: { auth },
      schema: {
        operationId: 'revokeToken',
        tags: ['tokens'],
        summary: 'Revokes a stored token: refused everywhere within a second, its open event streams ended; it stays listed, revoked',
        description:
          'The instance that answers refuses the token from its answer on, in every worker (the answer waits until they have dropped what they cached of it, half a second at most); every other instance within a second. The token of the request itself is revoked only with `self=true` (otherwise 409). A token revoked already, or unknown, is 404.',
        params: TokenIdParams,
        querystring: RevokeQuery,
        headers: RevokeHeaders,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 409, 412, 503) },
        responseDescriptions: {
          204: 'Revoked',
          404: 'Error response: no stored token with this id, or it is revoked already',
          409: 'Error response: it is the token of this request, and `self=true` was not sent; nothing changed',
        },
        errorExamples: [
          example('not_found', notFound('3f9a1c07b2e4')),
          example('token_revoked', REVOKED_ALREADY_EXAMPLE),
          example('token_is_own', REVOKING_ITSELF_EXAMPLE),
          WRITE_PRECONDITION_FAILED,
        ],
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const token = await tokens.get(id);
      if (!token) throw new HttpError('not_found', notFound(id));
      if (token.revokedAt !== null) throw new HttpError('token_revoked', revokedAlready(id, token.revokedAt));
      const principal = request.principal!;
      if (principal.source === 'stored' && principal.tokenId === id && request.query.self !== true)
        throw new HttpError('token_is_own', revokingItself(id));
      checkWriteIfMatch(request, reply, tokenView(token), Token);
      // Revoked meanwhile by another request: as if it had been revoked before this one.
      if (!(await tokens.revoke(id, { byId: true }))) throw new HttpError('token_revoked', revokedAlready(id, null));
      await revoked?.(id);
      return reply.code(204).send();
    },
  );

  done();
};
