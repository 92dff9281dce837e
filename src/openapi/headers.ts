import { DEPRECATION_HEADERS } from '../http/deprecation.js';
import { REPLAYED_HEADER } from '../http/idempotency.js';
import { WARNING_HEADERS } from '../http/unknown-fields.js';

/**
 * The answer headers of the OpenAPI document that do not depend on the route's own answer but on what the
 * route is: rate-limited, keyed, taking a body, holding int64 values, taking a renamed parameter. The service
 * sets them in its pipeline's steps whatever the status (a 404 of a counted request has its RateLimit, a 412
 * of a replay its Idempotent-Replayed, a 400 of a request that used a deprecated name its Deprecation), so
 * the document declares them here, on every answer of such an operation, once for all routes.
 */

export interface HeaderDoc {
  description: string;
  schema: object;
  deprecated?: boolean;
}
type Headers = Record<string, HeaderDoc>;

const text = (description: string): HeaderDoc => ({ description, schema: { type: 'string' } });
const integer = (description: string): HeaderDoc => ({ description, schema: { type: 'integer', minimum: 0 } });
/** A header kept until its sunset (docs/api.md, "Deprecations"). */
const deprecated = (header: HeaderDoc): HeaderDoc => ({ ...header, deprecated: true });

/**
 * Headers that go with a status wherever it is answered. Descriptions are Markdown, as /docs renders
 * them: a literal `<` or `"` stays in a code span, or it would be taken for HTML and vanish.
 */
export const STATUS_HEADERS: Record<number, Headers> = {
  401: { 'WWW-Authenticate': text('`Bearer realm="plant-store"`, with `error="invalid_token"` when a token was sent') },
  403: { 'WWW-Authenticate': text('`Bearer realm="plant-store", error="insufficient_scope", scope="<the scope needed>"`') },
  429: { 'Retry-After': integer('Seconds until the limit resets') },
  415: { Accept: text('The media types the operation takes, comma-separated: those the message names') },
  503: { 'Retry-After': integer('Seconds to wait before retrying') },
};

/** A PATCH's 415 names the patch formats it takes in Accept-Patch as well (RFC 5789 §2.2). */
export const PATCH_415_HEADERS: Headers = {
  ...STATUS_HEADERS[415],
  'Accept-Patch': text('The patch formats the operation takes, comma-separated (as Accept)'),
};

/**
 * The request budget (http/rate-limit.ts), on every answer to a counted request when RATE_LIMIT_PER_MINUTE
 * is set, whatever its status; on a 429 it says why.
 */
const RATE_LIMIT_HEADERS: Headers = {
  'RateLimit-Policy': text(
    'With `RATE_LIMIT_PER_MINUTE`, on every answer (draft-ietf-httpapi-ratelimit-headers): `"default";q=<requests per window>;w=60`',
  ),
  RateLimit: text(
    'With `RATE_LIMIT_PER_MINUTE`, on every answer: the budget left, `"default";r=<requests left>;t=<seconds until the window resets>`',
  ),
  'RateLimit-Limit': deprecated(integer('Requests allowed per minute (draft 06; use RateLimit-Policy)')),
  'RateLimit-Remaining': deprecated(integer('Requests left this minute (draft 06; use RateLimit)')),
  'RateLimit-Reset': deprecated(integer('Seconds until the limit resets (draft 06; use RateLimit)')),
};

/** What an operation is, for the headers all its answers may carry. */
export interface OperationTraits {
  /** Counted by the rate limit (every operation but the probes). */
  counted: boolean;
  /** Takes an Idempotency-Key: an answer may be a replay. */
  keyed: boolean;
  /** Takes a body, whose unknown fields are warned of and whose Prefer: handling is acknowledged. */
  handlesFields: boolean;
  /** Its answers hold int64 values, which Prefer: int64=string writes as strings. */
  int64: boolean;
  /** Takes a renamed query parameter's old name: its answers then say it is deprecated. */
  renamed: boolean;
}

/** A header of the operation's answers, kept once in the document's components.headers under its name there. */
export interface SharedHeader {
  component: string;
  header: HeaderDoc;
}
export type SharedHeaders = Record<string, SharedHeader>;

/** The headers every answer of an operation may carry (none required: each depends on the request or the settings). */
export function operationHeaders(traits: OperationTraits): SharedHeaders {
  const headers: SharedHeaders = {};
  const add = (name: string, component: string, header: HeaderDoc) => (headers[name] = { component, header });
  if (traits.counted) for (const [name, header] of Object.entries(RATE_LIMIT_HEADERS)) add(name, name, header);
  if (traits.keyed) add('Idempotent-Replayed', 'Idempotent-Replayed', REPLAYED_HEADER['Idempotent-Replayed']);
  const preferences = [
    ...(traits.handlesFields ? [['handling', '`handling=strict` or `handling=lenient`'] as const] : []),
    ...(traits.int64 ? [['int64', '`int64=string` (int64 values written as JSON strings)'] as const] : []),
  ];
  // The answers of such an operation depend on Prefer: int64=string, whatever their status (app/pipeline.ts, step 11).
  if (traits.int64) add('Vary', 'Vary.prefer', text('Names `Prefer`: the answer depends on it (`int64=string`)'));
  if (preferences.length > 0) {
    const words = preferences.map(([, said]) => said).join('; ');
    add(
      'Preference-Applied',
      ['Preference-Applied', ...preferences.map(([key]) => key)].join('.'),
      text(`The preferences of \`Prefer\` applied, comma-separated: ${words}`),
    );
  }
  const warnings = [
    ...(traits.handlesFields ? [['fields', WARNING_HEADERS.Warning.description] as const] : []),
    ...(traits.renamed
      ? [['deprecation', '`299 - "querystring.<old> is deprecated: use <new> (sunset …)"` when the request used a deprecated name'] as const]
      : []),
  ];
  if (warnings.length > 0) add('Warning', ['Warning', ...warnings.map(([key]) => key)].join('.'), text(warnings.map(([, said]) => said).join('; ')));
  if (traits.renamed) {
    for (const [name, header] of Object.entries(DEPRECATION_HEADERS)) add(name, name, header);
    add(
      'Link',
      'Link.deprecation',
      text('With Deprecation: `<…docs#/<tag>/<operation>>; rel="deprecation"; type="text/html"`, after any other link (the next page)'),
    );
  }
  return headers;
}

/**
 * The headers of one answer: its route's own (or its status's) first, then those of the operation it does not
 * name, by reference (`register` keeps each in the components); where both name one (the Warning of a PUT
 * that replaced a plant; the Link of a page), both descriptions.
 */
export function withOperationHeaders(
  own: Record<string, HeaderDoc> | undefined,
  shared: SharedHeaders,
  register: (component: string, header: HeaderDoc) => void,
): Record<string, HeaderDoc | { $ref: string }> | undefined {
  const all: Record<string, HeaderDoc | { $ref: string }> = { ...own };
  for (const [name, { component, header }] of Object.entries(shared)) {
    const mine = own?.[name];
    if (mine === undefined) {
      register(component, header);
      all[name] = { $ref: `#/components/headers/${component}` };
    } else if (!mine.description.includes(header.description)) all[name] = { ...mine, description: `${mine.description}; ${header.description}` };
  }
  return Object.keys(all).length === 0 ? undefined : all;
}
