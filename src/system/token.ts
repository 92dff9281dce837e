import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import { errorResponses } from '../http/errors.js';
import { SCOPES, type Scope } from '../model/scopes.js';

/**
 * GET /token: what the bearer token of the request is and may do. Any valid token may ask, whatever its
 * scopes, so that a client (the web console) shows what the token does not allow as unavailable up front,
 * instead of failing later with 403s.
 */

export const TokenInfo = Type.Object(
  {
    id: Type.String({
      description:
        "Whom the token speaks for: a stored token's id (as `plant-store token list` shows it), `static:<the start of its hash>` for one of PLANT_STORE_TOKENS, or for a JWT `jwt:<iss>:sub:<sub>`, `jwt:<iss>:client:<client_id or azp>` or `jwt:<iss>:token:<the start of its hash>` (`%` and `:` in the claims written `%25` and `%3A`)",
    }),
    scopes: Type.Array(Type.Unsafe<Scope>({ type: 'string', enum: [...SCOPES] }), { description: 'What the token may do' }),
  },
  { description: 'TokenInfo' },
);
type TokenInfo = Static<typeof TokenInfo>;

export const tokenRoute: FastifyPluginCallbackTypebox = (app, _options, done) => {
  app.get(
    '/token',
    {
      config: { auth: 'token' },
      schema: {
        operationId: 'readToken',
        tags: ['tokens'],
        summary: 'The bearer token of this request: its id and its scopes',
        response: { 200: TokenInfo, ...errorResponses(401, 503) },
        responseDescriptions: { 200: 'The token' },
      },
    },
    async (request, reply) => {
      // The auth hook has verified the token of every request that reaches this handler.
      const { tokenId, scopes } = request.principal!;
      const info: TokenInfo = { id: tokenId, scopes: [...scopes] };
      return reply.send(info);
    },
  );
  done();
};
