import { fileURLToPath } from 'node:url';
import type { EventType } from '../model/event-types.js';
import { TOKEN_VARIABLE, type ApiTarget } from './api-target.js';
import { unlikePromised } from './answers.js';
import { fetchWithinOrigin, RedirectRefused } from './origin.js';
import { ANSWER_LOST, innermost, networkReason } from './network-failures.js';
import { say } from './output.js';
import { builtFile } from '../built.js';

/**
 * The CLI's API client: what a command needs to work through a running service rather than on the store.
 * The service is named by --url or PLANT_STORE_URL, the token by PLANT_STORE_TOKEN; the calls go through
 * the typed client (@plant-store/client, int64 ids exact both ways), and every way a call can fail comes
 * out as one line in words: the service's own message for a refusal, the address for a service that
 * cannot be reached. Any resource's commands use it the same way: an `--url` option (URL_OPTION), then
 * `apiTarget(given)` (undefined: work on the store; both in api-target.ts), `connect(target)`, and `call`.
 */

/** The service's Error shape, which the client gives for every non-2xx answer (another program's answer has no code). */
interface ErrorBody {
  error: number;
  message: string;
  code?: string;
}

/** What the CLI passes to a call: openapi-fetch's options, as the typed client takes them. */
export interface CallOptions {
  params?: { path?: Record<string, unknown>; query?: Record<string, unknown> };
  body?: unknown;
  headers?: Record<string, string>;
  /** A body sent as it is (a stream), not as JSON. */
  bodySerializer?: (body: unknown) => unknown;
  /** 'stream': a 2xx answer's body as a ReadableStream (exports). */
  parseAs?: 'stream';
  /** A streamed request body needs it (fetch). */
  duplex?: 'half';
}

/** The paths the CLI calls; test/cli/api-types.test.ts holds them, and their types, to the served document's. */
export type ApiPath =
  '/plants' | '/plants/{id}' | '/plants/import' | '/tokens' | '/tokens/{id}' | '/webhooks' | '/webhooks/{id}' | '/webhooks/{id}/deliveries';

type Method = 'get' | 'post' | 'delete';

/**
 * The part of @plant-store/client the CLI uses: `request`, by method and path named at run time. Its generic
 * typed calls need the package's generated types, which do not exist yet when the service is compiled (they
 * are made from the compiled service); so the CLI types its calls itself, and test/cli/api-types.test.ts holds
 * those types (paths, parameters, answers) to the package's.
 */
export interface ClientModule {
  createClient(options: { baseUrl: string; headers: Record<string, string>; fetch?: (request: Request) => Promise<Response> }): Client;
  /** The change feed's follower, by its one policy (packages/client/src/follow.ts), and the error that ends it. */
  followEvents(client: Client, options: FollowOptions): Promise<void>;
  FollowError: new (...args: never[]) => Error & { reason: 'gone' | 'refused' | 'not-a-stream' | 'unreachable'; status?: number };
}

type Client = { request(method: Method, path: ApiPath, options?: CallOptions): Promise<{ data?: unknown; error?: ErrorBody; response: Response }> };

/** What the CLI gives the follower (test/cli/api-types.test.ts holds it to the package's FollowOptions). */
export interface FollowOptions {
  after?: string;
  types?: readonly EventType[];
  signal?: AbortSignal;
  giveUpMs?: number;
  onEvent(event: { type: string; data: string; lastEventId: string }): void | Promise<void>;
  onState?(state: { kind: 'connecting' } | { kind: 'live' } | { kind: 'reconnecting'; reason: string; waitMs: number; answered: boolean }): void;
}

/** The client package, bundled by the build (scripts/client-bundle.mjs) beside the compiled service, and shipped with it. */
const CLIENT_BUNDLE = builtFile('client/index.js');

async function loadClient(): Promise<ClientModule> {
  try {
    return (await import(CLIENT_BUNDLE.href)) as ClientModule;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error(`the API client is not built (${fileURLToPath(CLIENT_BUNDLE)} is missing): run npm run build`, { cause: error });
  }
}

/** The texts of an answer's `Warning: 299 - "…"` headers (RFC 7234's form, as the service writes them). */
function warnings(response: Response): string[] {
  const header = response.headers.get('warning');
  if (header === null) return [];
  return [...header.matchAll(/\d{3}\s+\S+\s+"((?:[^"\\]|\\.)*)"/g)].map((match) => unescapeWarning(match[1]!));
}

/**
 * A warning's text from its quoted-string: the backslashes of the quoting undone, then the characters past
 * ASCII, which the service wrote as \uXXXX (a header is ASCII), made again, so that a field named "tgé" is
 * said as the store-side import says it. A text's own backslash (doubled: \\) is left as it is.
 */
function unescapeWarning(quoted: string): string {
  return quoted
    .replace(/\\(.)/g, '$1')
    .replace(/\\(\\|u([0-9a-fA-F]{4}))/g, (escape, _what: string, hex?: string) =>
      hex !== undefined && parseInt(hex, 16) >= 0x7f ? String.fromCharCode(parseInt(hex, 16)) : escape,
    );
}

/**
 * The value of a query parameter (`cursor`, `after`) in a page's Link rel="next": only the parameter is
 * taken, since the link is relative to wherever the service is (behind a proxy, a prefix).
 */
export function nextPage(link: string | null, parameter: string): string | undefined {
  const next = link === null ? undefined : /<([^>]*)>\s*;\s*rel="?next"?/.exec(link)?.[1];
  return next === undefined ? undefined : (new URL(next, 'http://service/').searchParams.get(parameter) ?? undefined);
}

/**
 * Where a page's Link rel="next" says the next page starts: its `cursor` (every list's, from this release
 * on), or the `after` a service of the release before wrote for some lists; undefined on the last page.
 */
export function nextStart(link: string | null): { cursor?: string; after?: string } | undefined {
  const cursor = nextPage(link, 'cursor');
  if (cursor !== undefined) return { cursor };
  const after = nextPage(link, 'after');
  return after === undefined ? undefined : { after };
}

/** How long a call whose answer was lost waits before it asks once more: a moment for the first request to end. */
const RETRY_PAUSE_MS = 500;

/**
 * An answer of the service that is not a 2xx, as one line: its message, with what to do where the status says
 * it; and its error code, which tells apart refusals of one status (docs/api.md lists them).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** A 404 names the service it came from, as the store's commands name the store ("no plant with id 5 at http://…"). */
export function atService(api: { where: string }): (error: unknown) => never {
  return (error) => {
    if (error instanceof ApiError && error.status === 404) throw new ApiError(404, `${error.message} at ${api.where}`, error.code);
    throw error;
  };
}

/** A request sent twice whose answer was lost both times: it may have been done. */
export class AnswerLostError extends Error {}

/** Why the follower of the change feed ended (the client package's FollowError), for the command to say. */
export class FollowEnded extends Error {
  constructor(
    readonly reason: 'gone' | 'refused' | 'not-a-stream' | 'unreachable',
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
  }
}

/** A connection to one service: every call gets its answer's data, or throws one line saying why not. */
export class Api {
  private constructor(
    private readonly module: ClientModule,
    private readonly client: Client,
    readonly target: ApiTarget,
  ) {}

  static async connect(target: ApiTarget): Promise<Api> {
    const module = await loadClient();
    const client = module.createClient({ baseUrl: target.url, headers: { authorization: `Bearer ${target.token}` }, fetch: fetchWithinOrigin });
    return new Api(module, client, target);
  }

  /** Follows GET /events by the client package's follower, its one policy (docs/change-feed.md); how it ended, as a FollowEnded. */
  async follow(options: FollowOptions): Promise<void> {
    try {
      await this.module.followEvents(this.client, options);
    } catch (error) {
      if (error instanceof this.module.FollowError) throw new FollowEnded(error.reason, error.message, error.status);
      throw error;
    }
  }

  /** The service's address as messages show it. */
  get where(): string {
    return this.target.url;
  }

  /**
   * One request, and its answer's data. `retry`: a request that is safe to send twice (a POST with an
   * Idempotency-Key, a body that can be sent again) is sent once more, after a pause, when the connection
   * was lost before its answer: the second gets the first one's answer if the first was done. The retry is
   * said on stderr, naming `retry` (what makes it safe). The answer's warnings are said on stderr, but those
   * `hidden` takes (the command says them in its own words), and given with the data.
   */
  async call(
    method: Method,
    path: ApiPath,
    options: CallOptions = {},
    { retry, hidden }: { retry?: string; hidden?: (warning: string) => boolean } = {},
  ): Promise<{ data: unknown; response: Response; warnings: string[] }> {
    let answer: Awaited<ReturnType<Client['request']>>;
    for (let attempt = 1; ; attempt++) {
      try {
        answer = await this.client.request(method, path, options);
        break;
      } catch (error) {
        if (error instanceof RedirectRefused) throw error;
        // The client rejects only when there is no answer to give: none came, or a 2xx said JSON and was not.
        if (error instanceof SyntaxError)
          throw new Error(`the service at ${this.where} sent an answer marked JSON that does not parse: ${error.message}`, { cause: error });
        const lost = ANSWER_LOST.has((innermost(error) as NodeJS.ErrnoException | undefined)?.code ?? '');
        const failure = `the service at ${this.where}: ${networkReason(error)}`;
        if (!lost) throw new Error(`cannot reach ${failure}`, { cause: error });
        // The request reached the service: a write may have been done, and only its answer lost.
        if (retry === undefined) throw new AnswerLostError(`no answer from ${failure}${unknownOutcome(method, path, options)}`, { cause: error });
        if (attempt > 1) throw new AnswerLostError(`no answer from ${failure}, twice`, { cause: error });
        say(`plant-store: no answer from ${failure}; asking once more, with the same ${retry}`);
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    }
    const { data, error, response } = answer;
    if (error !== undefined) {
      for (const warning of warnings(response)) say(`plant-store: warning: ${warning}`);
      throw new ApiError(response.status, refusal(error, response, this.where), error.code);
    }
    // A success is one only in the shape the operation promises: another program's 2xx is no answer of the service's.
    const unlike = unlikePromised(`${method} ${path}`, response, data, options.parseAs === 'stream' ? options.headers?.accept : undefined);
    if (unlike !== undefined) {
      const done = method === 'get' ? '' : '; whether anything was done there is not known';
      throw new Error(`${this.where} does not answer as the plant store does (is it the service's address?): ${unlike}${done}`);
    }
    // The service says what it did beside the answer (an unknown field ignored, a plant replaced): told, not lost.
    const told = warnings(response);
    for (const warning of told) if (!hidden?.(warning)) say(`plant-store: warning: ${warning}`);
    return { data, response, warnings: told };
  }
}

/** What a lost answer leaves unknown: nothing for a read; for a write, whether it was done, and how to tell before sending it again. */
function unknownOutcome(method: Method, path: ApiPath, { params }: CallOptions): string {
  if (method === 'get') return '';
  // Path parameters are ids: numbers, bigints or strings.
  const sent = path.replace(/\{(\w+)\}/g, (name, key: string) => {
    const value = params?.path?.[key] as string | number | bigint | undefined;
    return value === undefined ? name : String(value);
  });
  return `; whether the ${method.toUpperCase()} ${sent} was done there is not known: read what it would change before sending it again`;
}

/** A refusal in words: the service's message, and for some statuses what to do about it. */
function refusal(error: ErrorBody, response: Response, where: string): string {
  const { status } = response;
  // Not the service's Error JSON: a proxy's page, or another program at that address.
  if (!/^application\/(?:[^\s;/]+\+)?json/i.test(response.headers.get('content-type') ?? '')) {
    return `${where} answered ${status} ${response.statusText}`.trimEnd() + `, not as the plant store does: is it the service's address?`;
  }
  if (status === 401) return `${error.message} (the token in ${TOKEN_VARIABLE}, at ${where})`;
  if (status === 429) {
    const after = response.headers.get('retry-after');
    // Seconds, or an HTTP-date (RFC 9110), said as it came.
    return `${error.message}${after === null ? '' : ` (retry after ${after}${/^\d+$/.test(after.trim()) ? ' s' : ''})`}`;
  }
  if (status >= 500) return `the service at ${where} answered ${status}: ${error.message}`;
  return error.message;
}
