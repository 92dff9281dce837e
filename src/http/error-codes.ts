/**
 * The error codes: one stable, snake_case `code` per distinct reason a request is refused, which every
 * error answer carries beside the specification's `error` (the status) and `message` (the words), so that a
 * program can tell two refusals of one status apart (a token name taken, an Idempotency-Key still running
 * and a create-only import meeting a stored plant are all 409) without reading the words, which may change.
 *
 * A code has one status, so an error is made from its code alone (HttpError); its title is the same for
 * every answer with that code (RFC 9457's `title`), where the message says what happened this time. The
 * table is the one list: docs/api.md's table, the OpenAPI document's enums and the tests read it. A code
 * is never renamed nor given another status within a major version; a new reason gets a new code.
 */
export const ERROR_CODES = {
  // 400: the request itself
  validation_failed: [400, 'A field or parameter breaks a rule of the operation (the message names each)'],
  invalid_id: [400, 'An id in the path is not of the form this kind of id has'],
  unknown_parameter: [400, 'A query parameter the operation does not take'],
  unknown_field: [400, 'A body field the operation does not know, refused under Prefer: handling=strict (or UNKNOWN_FIELDS=refuse)'],
  id_mismatch: [400, 'The body repeats the id of the path with another value'],
  invalid_json: [400, 'The body is not JSON, is empty, nests too deep or holds text that is not Unicode'],
  invalid_import: [400, 'A row of an import is not valid (the message names the line); nothing stored'],
  body_incomplete: [400, 'The client closed the connection before the body ended; nothing stored'],
  invalid_cursor: [400, 'A paging parameter does not say where a page of this list starts'],
  conflicting_parameters: [400, 'Two parameters that cannot be given together'],
  invalid_webhook_url: [400, 'The webhook URL is not an absolute http(s) URL reaching public addresses'],
  header_repeated: [400, 'A header that must come once (Host, Authorization, Idempotency-Key …) came more than once'],
  token_sent_twice: [400, 'The bearer token came both in the Authorization header and as access_token'],
  invalid_header: [400, 'A header is not valid HTTP (Host missing or malformed, Content-Type or Content-Length malformed)'],
  invalid_request: [400, 'The request is not valid HTTP/1.1, or its URL is not validly percent-encoded'],
  // 401, 403
  unauthorized: [401, 'Missing, malformed, unknown, revoked or expired bearer token'],
  forbidden: [403, 'The token lacks the scope this operation needs'],
  scope_not_grantable: [403, 'The new token would get a scope the token making it lacks'],
  token_manages_only: [403, 'A token holding tokens:manage alone makes no token'],
  token_in_url_refused: [403, 'A token that may do more than read events was sent in the URL'],
  // 404, 405, 408, 410
  not_found: [404, 'Nothing with this id'],
  token_revoked: [404, 'The token is revoked already'],
  route_not_found: [404, 'No operation has this path'],
  method_not_allowed: [405, 'The path has operations, but not for this method (Allow lists them)'],
  request_timeout: [408, 'The request was not received whole in time'],
  misdirected_request: [421, 'The Host header names a host the metrics listener does not answer to (METRICS_ALLOWED_HOSTS)'],
  events_expired: [410, 'The change feed no longer holds the events after this position (past its retention)'],
  // 409, 412, 422
  token_name_taken: [409, 'An active token has this name; nothing made'],
  idempotency_key_in_use: [409, 'A request with this Idempotency-Key still runs: retry once it is answered'],
  import_conflict: [409, 'A create-only import met a plant stored already; nothing stored'],
  token_is_own: [409, 'The token of the request would revoke itself without self=true'],
  precondition_failed: [
    412,
    'If-Match names no current ETag (a version of the plant), or If-None-Match on a write names the current one; nothing changed',
  ],
  plant_exists: [412, 'If-None-Match: * and the plant exists; nothing changed'],
  idempotency_key_reused: [422, 'The Idempotency-Key was used for another request; nothing done'],
  // 413, 414, 415, 417, 431
  body_too_large: [413, 'The body is larger than the limit'],
  uri_too_long: [414, 'The URL is too long'],
  unsupported_media_type: [
    415,
    "The body is not of a media type the operation takes (the message and Accept name those it takes; a PATCH's Accept-Patch too)",
  ],
  expectation_unsupported: [417, 'An Expect other than 100-continue'],
  headers_too_large: [431, 'The request headers are too large'],
  // 429
  rate_limited: [429, 'Too many requests from this token (or address) this minute; retry after Retry-After'],
  streams_limited: [429, 'This token (or address) holds its share of the event streams already'],
  // 500, 501, 503
  internal_error: [500, 'An unexpected fault; the log has the details under the request id'],
  transfer_coding_unsupported: [501, 'A Transfer-Encoding other than chunked (gzip, chunked …)'],
  method_unknown: [501, 'A method this service does not know (methods are case-sensitive: get is not GET)'],
  store_unavailable: [503, 'The store cannot be reached or cannot write; retry after Retry-After'],
  store_busy: [503, 'The store takes writes slower than they come; retry after Retry-After'],
  overloaded: [503, 'The service is overloaded; retry after Retry-After'],
  keys_unavailable: [503, "The identity provider's keys cannot be fetched to check this JWT; retry after Retry-After"],
  streams_full: [503, 'The instance serves the most event streams it may (EVENTS_MAX_STREAMS); retry later'],
  not_ready: [503, 'The store does not answer, or cannot take writes'],
  stopping: [503, 'The instance is stopping: a load balancer should send no more requests to it'],
  webhook_host_lookup_timeout: [
    503,
    "The webhook URL's host could not be looked up in time (the service's DNS resolver did not answer within WEBHOOK_DNS_TIMEOUT_MS); retry after Retry-After",
  ],
  console_not_built: [503, 'The web console was not built into this installation'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code][0];
}

export function titleOf(code: ErrorCode): string {
  return ERROR_CODES[code][1];
}

/**
 * The problem type (RFC 9457 `type`) of a code: a tag URI (RFC 4151), which names the code for good
 * wherever the service is deployed and is not meant to be fetched (RFC 9457 §3.1.1 suggests tag URIs for
 * such types); docs/api.md lists what each means.
 */
export function problemType(code: ErrorCode): string {
  return `tag:plant-store,2026:problem:${code}`;
}

/** An error answer as the OpenAPI document shows it: its code, its words, the field it concerns. An HttpError is one. */
export interface ErrorExample {
  readonly code: ErrorCode;
  readonly message: string;
  readonly field?: string | undefined;
}

export function example(code: ErrorCode, message: string, field?: string): ErrorExample {
  return field === undefined ? { code, message } : { code, message, field };
}
