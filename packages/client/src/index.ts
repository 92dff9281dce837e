import createFetchClient, { type ClientOptions, type Middleware, type ParseAs } from 'openapi-fetch';
import { answerData, errorBody, serializeBody } from './content.js';
import type { HttpMethod, PlantStoreClient } from './types.js';

/**
 * The Plant Store client: `import { createClient } from '@plant-store/client'`. openapi-fetch builds the
 * requests (paths, query strings, headers, middleware); this module adds what the API needs on top:
 * - int64 exact both ways: 2xx JSON answers are parsed by the exact parser the service itself reads bodies
 *   with (./json.ts, exported as `@plant-store/client/json` too), so an id is a number when it is a safe
 *   integer and a bigint beyond 2^53; bigints in bodies are sent as plain JSON integers, and in paths and
 *   query strings as their decimal digits;
 * - answers that are not JSON (text/csv, NDJSON…) come as text instead of failing to parse;
 * - `error` is the Error shape for every non-2xx answer, even one the service did not write.
 * Everything else is generated: a new operation in the document needs no change here.
 *
 * It also hands out what a program following the change feed needs: followEvents (follow.ts: reconnecting,
 * the `retry:` hint, Last-Event-ID, what a 410 means, backoff: the console's and the CLI's one policy),
 * EventStreamReader (event-stream.ts: Server-Sent Events read by the WHATWG rules), and EVENT_TYPES, the
 * event types, a copy of the service's own list (src/model/event-types.ts) made by the build, as json.ts is.
 */

export type { CallOptions, CallResult, HttpMethod, PathsWithMethod, PlantStoreClient } from './types.js';
export type { ErrorBody } from './content.js';
export type { components, operations, paths, webhooks } from './openapi-types.js';
export { EventStreamReader, type ServerSentEvent } from './event-stream.js';
export { EVENT_TYPES, type EventType } from './event-types.js';
export { FollowError, followEvents, type FollowOptions, type FollowState } from './follow.js';

/** What the client gives and takes for every `format: int64` value: a number when safe, a bigint beyond 2^53. */
export type Int64 = number | bigint;

export interface PlantStoreClientOptions extends ClientOptions {
  /**
   * What the service does with a body field the operation does not know (a typo, a field of a newer
   * version). `strict` (the default): refused, 400 naming it, nothing written; `lenient`: ignored, and said
   * in a `Warning` header (the service's own default). Sent on every POST, PUT and PATCH as
   * `Prefer: handling=…`, unless the call's own Prefer header says.
   */
  handling?: 'strict' | 'lenient';
}

/** The methods whose bodies the service checks for unknown fields. */
const WRITES = new Set(['POST', 'PUT', 'PATCH']);

/** Adds `handling=…` to a write's Prefer header (RFC 7240), unless it names handling already. */
function preferHandling(handling: 'strict' | 'lenient'): Middleware {
  return {
    onRequest({ request }) {
      if (!WRITES.has(request.method)) return undefined;
      const prefer = request.headers.get('prefer');
      if (prefer !== null && /(^|,)\s*handling\s*=/i.test(prefer)) return undefined;
      request.headers.set('prefer', prefer === null || prefer.trim() === '' ? `handling=${handling}` : `${prefer}, handling=${handling}`);
      return request;
    },
  };
}

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'] as const;

/** openapi-fetch's request, seen without the generated types: this module only passes arguments through. */
type UntypedRequest = (
  method: HttpMethod,
  path: string,
  options?: { parseAs?: ParseAs },
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export function createClient({ handling = 'strict', ...options }: PlantStoreClientOptions = {}): PlantStoreClient {
  const fetchClient = createFetchClient({ bodySerializer: serializeBody, ...options });
  fetchClient.use(preferHandling(handling));
  const request = fetchClient.request as unknown as UntypedRequest;

  async function call(method: string, path: string, callOptions: { parseAs?: ParseAs } = {}) {
    // Unless told otherwise, read the answer as text and parse it here: openapi-fetch would use JSON.parse,
    // which rounds ids past 2^53, and would throw on a text/csv answer.
    const { data, error, response } = await request(method.toLowerCase() as HttpMethod, path, {
      ...callOptions,
      parseAs: callOptions.parseAs ?? 'text',
    });
    if (!response.ok) return { error: errorBody(error, response), response };
    if (callOptions.parseAs !== undefined || data === undefined) return { data, response };
    return { data: answerData(data as string, response.headers.get('content-type')), response };
  }

  const client = {
    ...Object.fromEntries(METHODS.map((method) => [method, (path: string, callOptions?: { parseAs?: ParseAs }) => call(method, path, callOptions)])),
    request: call,
    use: (...middleware: Middleware[]) => fetchClient.use(...middleware),
    eject: (...middleware: Middleware[]) => fetchClient.eject(...middleware),
  };
  // The calls above keep openapi-fetch's { data, error, response } contract, which PlantStoreClient types per operation.
  return client as unknown as PlantStoreClient;
}
