import type { FetchOptions, FetchResponse, Middleware, ParseAs } from 'openapi-fetch';
import type { paths } from './openapi-types.js';

/**
 * The client's type: openapi-fetch's Client over the generated `paths`, with one difference. openapi-fetch
 * infers a call's whole second argument as a type parameter, so a misspelt optional field
 * (`{ id, name, tga }`) is accepted; here only `parseAs` is inferred and the rest is checked against the
 * operation as it is, so unknown fields are errors at every level.
 */

export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';

/** The document's paths that have an operation for this method. */
export type PathsWithMethod<M extends HttpMethod> = { [P in keyof paths]: paths[P] extends { [K in M]: unknown } ? P : never }[keyof paths];

/** The operation of a path and method, as generated. */
type Operation<P extends keyof paths, M extends HttpMethod> = paths[P] extends { [K in M]: infer O extends Record<string | number, unknown> }
  ? O
  : never;

/** A call's options: its parameters and body as the operation has them, fetch's own options, and how to read a 2xx answer. */
export type CallOptions<O, As extends ParseAs | undefined> = FetchOptions<O> & { parseAs?: As };

/** The second argument: required when the operation has required parameters or a required body. */
type CallArgs<O, As extends ParseAs | undefined> = object extends FetchOptions<O> ? [options?: CallOptions<O, As>] : [options: CallOptions<O, As>];

/**
 * `{ data, error, response }`: `data` for a 2xx answer (JSON parsed exactly, int64 as number | bigint; other
 * media types as text unless `parseAs` says otherwise), `error` (the Error shape) for any other status.
 * `data` is typed as the JSON answer: an operation that can also answer another media type (GET /plants
 * exports NDJSON and CSV) is asked for it with `parseAs: 'text'` or `'stream'`, which type it so.
 */
export type CallResult<O extends Record<string | number, unknown>, As extends ParseAs | undefined> = FetchResponse<
  O,
  { parseAs: As },
  'application/json'
>;

type CallMethod<M extends HttpMethod> = <P extends PathsWithMethod<M>, As extends ParseAs | undefined = undefined>(
  path: P,
  ...options: CallArgs<Operation<P, M>, As>
) => Promise<CallResult<Operation<P, M>, As>>;

export interface PlantStoreClient {
  GET: CallMethod<'get'>;
  PUT: CallMethod<'put'>;
  POST: CallMethod<'post'>;
  DELETE: CallMethod<'delete'>;
  OPTIONS: CallMethod<'options'>;
  HEAD: CallMethod<'head'>;
  PATCH: CallMethod<'patch'>;
  TRACE: CallMethod<'trace'>;
  /** Any method, named at run time: `client.request('get', '/plants')`. */
  request<M extends HttpMethod, P extends PathsWithMethod<M>, As extends ParseAs | undefined = undefined>(
    method: M,
    path: P,
    ...options: CallArgs<Operation<P, M>, As>
  ): Promise<CallResult<Operation<P, M>, As>>;
  /** openapi-fetch's middleware: onRequest, onResponse, onError. */
  use(...middleware: Middleware[]): void;
  eject(...middleware: Middleware[]): void;
}
