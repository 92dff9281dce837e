import { parseJson, stringifyJson } from './json.js';
import type { components } from './openapi-types.js';

/** The Error shape `{error, message}`: every error answer of the service has it, and the client makes one for any other. */
export type ErrorBody = components['schemas']['Error'];

/** application/json and the types built on it (application/merge-patch+json, application/problem+json…). */
const JSON_MEDIA_TYPE = /^application\/(?:[^\s;/]+\+)?json\s*(?:;|$)/i;

export function isJsonMediaType(contentType: string | null | undefined): boolean {
  return contentType != null && JSON_MEDIA_TYPE.test(contentType);
}

/**
 * A request body as the service reads it: JSON, with bigints written as plain JSON integers. A body the
 * caller gives another Content-Type (say text/csv) or FormData is sent as given, not quoted as a JSON string.
 */
export function serializeBody(body: unknown, headers?: Headers): unknown {
  if (body instanceof FormData) return body;
  const contentType = headers?.get('content-type');
  if (contentType && !isJsonMediaType(contentType)) return body;
  return stringifyJson(body);
}

/** A 2xx answer's text as data: exact JSON when its Content-Type says JSON, the text itself otherwise (CSV, NDJSON…). */
export function answerData(text: string, contentType: string | null): unknown {
  if (!isJsonMediaType(contentType)) return text;
  return text === '' ? undefined : parseJson(text);
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (value === null || typeof value !== 'object') return false;
  const { error, message } = value as Partial<Record<keyof ErrorBody, unknown>>;
  return typeof error === 'number' && typeof message === 'string';
}

/** The service's RFC 9457 problem details (asked for with Accept: application/problem+json): the same facts as its Error shape. */
function fromProblem(body: unknown): ErrorBody | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const { status, detail, code, field } = body as Record<string, unknown>;
  if (typeof status !== 'number' || typeof detail !== 'string' || typeof code !== 'string') return undefined;
  return { error: status, message: detail, code, ...(typeof field === 'string' && { field }) };
}

/**
 * The `error` of a non-2xx answer, always the Error shape: the service's own body (or its problem details,
 * read as the Error shape they say the same as), or, for an answer it did not write (a proxy's HTML 502,
 * an empty 401), one made of the status and the text that came. `body` is what openapi-fetch read: the
 * parsed JSON, the text when it was not JSON, or undefined when empty.
 */
export function errorBody(body: unknown, response: Response): ErrorBody {
  if (isErrorBody(body)) return body;
  const problem = fromProblem(body);
  if (problem !== undefined) return problem;
  const text = typeof body === 'string' ? body.trim() : body === undefined ? '' : stringifyJson(body);
  return { error: response.status, message: text || `${response.status} ${response.statusText}`.trim() };
}
