import { SCOPES } from '../model/scopes.js';
import { orList } from '../words.js';

/**
 * The OpenAPI document's `info.description`: what the service is, how to get a token and how to send it,
 * the first thing /docs shows. Markdown, as Swagger UI renders it: a literal `<` stays in a code span or
 * a code block, or it would be taken for HTML and vanish.
 */
export const API_DESCRIPTION = `Plant Store keeps a plant store's plants behind a JSON-over-HTTP API: create, read, replace, change and
delete plants, list and export them (JSON pages, NDJSON, CSV), import many at once, and have every change
announced to your webhooks, signed and retried, or read in order from the change feed (\`GET /events\`).

## Getting a token

Every operation but the system ones (health, readiness, this document) needs a bearer token with the
operation's scope, one of ${orList(SCOPES.map((scope) => `\`${scope}\``))} (each operation names its own).

- **The first start** of the server on an empty store makes one full-access token and prints it once on
  its standard error, never in the log.
- **More tokens**, each with only the scopes it needs, come from the command-line tool through this
  service, with a token that has \`tokens:manage\` (the first one has) in \`PLANT_STORE_TOKEN\`; the new
  token is printed alone on standard output:

  \`\`\`
  PLANT_STORE_TOKEN=$TOKEN npx plant-store token create --name reporting --scope plants:read --url http://127.0.0.1:8080/
  \`\`\`

  \`token list\` shows them (never their secrets) and \`token revoke NAME\` takes one back within a second.
  Without \`--scope\` a token may read and write plants. On the server's machine the same commands without
  \`--url\` work on its store, given the server's \`DATABASE_URL\`.
- **Over the API**, a token with \`tokens:manage\` lists (\`GET /tokens\`), makes (\`POST /tokens\`) and revokes
  (\`DELETE /tokens/{id}\`) stored tokens, granting only scopes it holds itself.
- Operators may also configure static tokens (\`PLANT_STORE_TOKENS\`) or accept JWTs from an identity
  provider (scopes in \`scope\` or \`scp\`).

## Sending it

With every request, as the header \`Authorization: Bearer <token>\`. Here, press **Authorize**, paste the
token, then **Try it out** on any operation. From a shell:

\`\`\`
curl -s http://127.0.0.1:8080/plants -H "Authorization: Bearer $TOKEN" \\
  -H 'Content-Type: application/json' -d '{"id": 1, "name": "Monstera", "tag": "tropical"}'
\`\`\`

A missing or unknown token is answered 401, a token without the operation's scope 403.

## Retrying safely

Every POST takes an \`Idempotency-Key\` header: a key of yours (a UUID), 1 to 255 printable ASCII characters,
bare or as a quoted string. Send the same key when you retry a request whose answer you did not get: the
first request with a key runs, and a retry gets its answer again, status, headers and body, with
\`Idempotent-Replayed: true\`, without anything being done twice (no second endpoint, no second rotation).
What the request did is kept for \`IDEMPOTENCY_KEY_TTL\` (24 hours) and belongs to your token. The same key with
another request (method, path, query or body) is answered 422; while the first request still runs, 409.
A request refused before it ran (400, 401, 403, 413, 415, 429, 503) keeps nothing: correct it and send it
again with the same key.

## Errors

Every error, of any status, is \`{"error": <the HTTP status>, "message": "…"}\`. A 400 names every field
or parameter at fault and the rule it breaks, up to 10 problems in one message
(\`body.name must not be empty; body.id must be an integer\`). Query parameters an operation does not
list are refused (\`unknown query parameter "nme"\`), never ignored. Ids are 64-bit integers, exact to the
last digit: read answers with a JSON parser that keeps integers beyond 2^53.

## Ids in JavaScript

\`JSON.parse\` rounds an integer beyond 2^53. Send \`Prefer: int64=string\` and every \`format: int64\` value
of an answer (plant ids, in pages and event streams too) comes as a string, answered with
\`Preference-Applied: int64=string\`; a body may then send its id as a string too. Without it, ids are
JSON integers. A webhook endpoint registered with \`"int64": "string"\` gets its deliveries' plant ids as
strings likewise. Each int64 schema here names that string form in \`x-int64-string\`.

## Deprecations

A parameter or header marked deprecated here keeps working until its sunset, 12 months at least, and
goes only with a major release. A request that uses a deprecated name is answered with \`Deprecation\`
(RFC 9745), \`Sunset\` (RFC 8594) and \`Link: <…>; rel="deprecation"\`.
`;
