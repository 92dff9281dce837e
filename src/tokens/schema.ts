import { Type, type Static } from '@sinclair/typebox';
import { ConditionalReadHeaders, IfMatchWriteHeaders } from '../http/caching.js';
import { CursorParam } from '../http/cursors.js';
import { IdempotencyKeyHeaders } from '../http/idempotency.js';
import { SUNSET_HEADER } from '../http/deprecation.js';
import { PreferHandlingHeaders } from '../http/unknown-fields.js';
import { Query } from '../http/strict-query.js';
import { STORABLE_TEXT } from '../model/plant.js';
import { SCOPES, type Scope } from '../model/scopes.js';
import { TOKEN_NAME_MAX, TOKEN_NAME_PATTERN, TOKEN_NAME_RULE } from '../model/token-name.js';

/**
 * The token resource's schemas: validation, serialization, the OpenAPI document and the types below. A
 * stored token is shown by its id, name, scopes and times, never by its secret or its hash: the secret is
 * in the answer that makes it (CreatedToken) and nowhere else.
 */

export const PAGE_LIMIT_MAX = 1000;
export const PAGE_LIMIT_DEFAULT = 100;

const ScopeName = Type.Unsafe<Scope>({ type: 'string', enum: [...SCOPES], description: 'A scope' });
const Time = (description: string) => Type.String({ format: 'date-time', description });

const TokenName = Type.String({
  minLength: 1,
  maxLength: TOKEN_NAME_MAX,
  pattern: TOKEN_NAME_PATTERN,
  patternMeaning: TOKEN_NAME_RULE,
  description: `What to call it: unique among active tokens, 1 to ${TOKEN_NAME_MAX} characters that show as themselves (no control, format or invisible characters, no space but the plain one, none at either end)`,
  examples: ['reporting'],
});

/** GET /token: the bearer token of the request. */
export const TokenInfo = Type.Object(
  {
    id: Type.String({
      description:
        "Whom the token speaks for: a stored token's id (as GET /tokens and `plant-store token list` show it), `static:<the start of its hash>` for one of PLANT_STORE_TOKENS, or for a JWT `jwt:<iss>:sub:<sub>`, `jwt:<iss>:client:<client_id or azp>` or `jwt:<iss>:token:<the start of its hash>` (`%` and `:` in the claims written `%25` and `%3A`)",
    }),
    scopes: Type.Array(ScopeName, { description: 'What the token may do' }),
  },
  { description: 'TokenInfo' },
);
export type TokenInfo = Static<typeof TokenInfo>;

const tokenFields = {
  id: Type.String({ description: "The token's id (12 hex digits): what GET and DELETE /tokens/{id} take", examples: ['3f9a1c07b2e4'] }),
  name: TokenName,
  scopes: Type.Array(ScopeName, { description: 'What the token may do' }),
  createdAt: Time('When it was made'),
  revokedAt: Type.Union([Time('When it was revoked'), Type.Null()], { description: 'When it was revoked; null while it is active' }),
};

export const Token = Type.Object(tokenFields, { description: 'Token' });
export type Token = Static<typeof Token>;

export const CreatedToken = Type.Object(
  {
    ...tokenFields,
    secret: Type.String({
      pattern: '^ps_[A-Za-z0-9_-]{43}$',
      description:
        'The token itself, to send as `Authorization: Bearer <secret>`: ps_ and 32 random bytes in base64url. Shown only in this answer: the service keeps its hash alone.',
    }),
  },
  { description: 'CreatedToken' },
);
export type CreatedToken = Static<typeof CreatedToken>;

export const NewToken = Type.Object(
  {
    name: TokenName,
    scopes: Type.Array(ScopeName, {
      minItems: 1,
      uniqueItems: true,
      description: 'What it may do: at least one scope, each once, and only scopes the token making it holds itself',
      examples: [['plants:read']],
    }),
  },
  // Other members are ignored with a Warning, or refused under Prefer: handling=strict, as on every write (http/unknown-fields.ts).
  { description: 'NewToken' },
);
export type NewToken = Static<typeof NewToken>;

/**
 * A token's id: a stored token's (12 hex digits), or the id GET /token gives a token that is not stored
 * (`static:` and 12 hex digits, `jwt:…`), which names no stored token (404, saying what it is). Any other
 * form is a 400 naming the parameter; text PostgreSQL cannot hold (U+0000) is of no form.
 */
export const TokenIdParams = Type.Object({
  id: Type.String({
    maxLength: 200,
    pattern: '^(?:[0-9a-f]{12}|static:[0-9a-f]{12}|jwt:[^\\u0000\\uD800-\\uDFFF]+)$',
    patternMeaning: 'must be a token id: 12 hex digits (or static:… or jwt:…, as GET /token names a token that is not stored)',
    description: "The token's id: 12 hex digits, as GET /tokens gives it",
    examples: ['3f9a1c07b2e4'],
  }),
});

export const TOKEN_STATES = ['active', 'revoked'] as const;

const TokenStatus = (description: string, deprecated?: true) =>
  Type.Optional(
    Type.Unsafe<(typeof TOKEN_STATES)[number]>({ type: 'string', enum: [...TOKEN_STATES], description, ...(deprecated && { deprecated }) }),
  );

/** `status` is the lifecycle filter of every list (as of deliveries); `state`, its name before, is taken until its sunset (http/deprecation.ts). */
export const TOKEN_LIST_RENAMED = { state: 'status' } as const;

export const TokenListQuery = Query({
  status: TokenStatus('Only active, or only revoked, tokens (default: both)'),
  state: TokenStatus(`Deprecated: the earlier name of \`status\`, taken until ${SUNSET_HEADER} (answered with Deprecation and Sunset headers)`, true),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT, description: 'The most to return' })),
  cursor: Type.Optional(CursorParam('status')),
  after: Type.Optional(
    Type.String({
      maxLength: 200,
      pattern: STORABLE_TEXT,
      description: 'The id of the last token of the previous page: an alias of the cursor, kept for the clients that use it. Not with `cursor`',
    }),
  ),
});

/** DELETE /tokens/{id}: If-Match, to revoke the token only as it was read. */
export const RevokeHeaders = Type.Object({ ...IfMatchWriteHeaders });

export const RevokeQuery = Query({
  self: Type.Optional(
    Type.Boolean({
      description:
        'true: yes, revoke the token this request is sent with. Without it, a token revoking itself is refused (409), so that no one locks themselves out by a slip',
    }),
  ),
});

/** POST /tokens: the Idempotency-Key, declared as on every POST, and Prefer: handling for its body's unknown fields. */
export const KeyedHeaders = Type.Object({ ...IdempotencyKeyHeaders, ...PreferHandlingHeaders });

/** The reads: If-None-Match, for a 304 while the answer is the same. */
export const ReadHeaders = Type.Object({ ...ConditionalReadHeaders });
