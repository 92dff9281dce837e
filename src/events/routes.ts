import { Readable } from 'node:stream';
import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { quality } from '../http/accept.js';
import { checkUnversionedRead, NOT_MODIFIED, READ_PRECONDITION_FAILED, revalidationHeaders, sendRevalidated, vary } from '../http/caching.js';
import { errorResponses, HttpError, NoContent } from '../http/errors.js';
import { example } from '../http/error-codes.js';
import { int64Applied, prefersInt64Strings } from '../http/int64-preference.js';
import { nextPage, startAfter, type PageLinkForm } from '../http/cursors.js';
import { nextPageLink } from '../http/paging.js';
import { addressKey, withoutRequestBudget } from '../http/rate-limit.js';
import { TOKEN_IN_URL_REFUSED } from '../http/auth.js';
import { shareTaken } from './slots.js';
import { FEED_START, type EventStore } from '../store/event-store.js';
import { gone, type Feed } from './feed.js';
import { eventJson } from './frames.js';
import { EventsHeaders, EventsQuery, FEED_LIMIT_DEFAULT, FeedEventSchema } from './schema.js';

/**
 * GET /events: the change feed, as pages of JSON or, asked for text/event-stream, as a live stream of
 * Server-Sent Events that resumes where the client left off (Last-Event-ID). Both read the same events in
 * the same order: commit order (see store/event-store.ts).
 */

const STREAM = 'text/event-stream';

/** Whether the client asked for a stream: text/event-stream preferred to JSON by Accept (JSON on a tie). */
function wantsStream(accept: string | undefined): boolean {
  return accept !== undefined && quality(accept, STREAM) > quality(accept, 'application/json');
}

const STREAM_DOC = {
  schema: {
    type: 'string',
    description:
      'Server-Sent Events: first `retry:`, then each event as `id: <event id>`, `event: <type>`, `data: <the event as JSON>` and a blank line, ' +
      'oldest first; a `: heartbeat` comment every EVENTS_HEARTBEAT_MS. Without a cursor the stream starts at the newest event and ' +
      'carries what commits next; it first sends `id: <the newest event id>`, `event: start`, an empty `data:` (the place before ' +
      'every event, msg_00000000000000000000000000, when there is none yet), so that a reconnect resumes from there',
  },
};

/** What a cursor of the feed is bound to: the types asked for, as a set. */
function typeScope(types: readonly string[] | undefined): string {
  return types === undefined ? '' : [...types].sort().join(',');
}

/** A page's caching headers (a stream is not kept: `no-store`); Accept picks a page or a stream. */
const PAGE_CACHING = revalidationHeaders('weak', ['Accept']);

export const eventRoutes: FastifyPluginCallbackTypebox<{ feed: Feed; events: EventStore; pageLinks?: PageLinkForm }> = (
  app,
  { feed, events, pageLinks = 'signed' },
  done,
) => {
  app.get(
    '/events',
    {
      config: { auth: 'events:read', tokenInQuery: true },
      schema: {
        operationId: 'listEvents',
        tags: ['events'],
        summary: 'The change feed: every plant change in commit order, as pages, or live as Server-Sent Events (Accept: text/event-stream)',
        querystring: EventsQuery,
        headers: EventsHeaders,
        response: { 200: Type.Array(FeedEventSchema), 304: NoContent, ...errorResponses(400, 401, 403, 410, 412, 429, 503) },
        responseDescriptions: {
          200: 'A page of events, oldest first (Link: rel="next" while more remain); or, asked for text/event-stream, a live stream',
          304: NOT_MODIFIED,
          403: `Error response: the token lacks events:read; or it came as access_token and may do more than read events (\`${TOKEN_IN_URL_REFUSED}\`)`,
          410: 'Error response: the place to start (cursor, after, or Last-Event-ID) is older than the retention or was never an event; resynchronise from GET /plants',
          429: 'Error response: (a stream) this token or this client address holds its share of the streams (EVENTS_MAX_STREAMS_PER_TOKEN, EVENTS_MAX_STREAMS_PER_ADDRESS); retry after Retry-After seconds',
          503: 'Error response: the store is unavailable, or (a stream) EVENTS_MAX_STREAMS streams are open; retry after Retry-After seconds',
        },
        responseHeaders: {
          200: {
            Link: { description: '`<…>; rel="next"` while more events remain (a page, not a stream)', schema: { type: 'string' } },
            ...PAGE_CACHING,
          },
          304: PAGE_CACHING,
        },
        responseMediaTypes: { 200: { [STREAM]: STREAM_DOC } },
        errorExamples: [
          READ_PRECONDITION_FAILED,
          example('validation_failed', 'querystring.after must be an event id, msg_ and 26 characters', 'querystring.after'),
          example('token_sent_twice', 'send the bearer token once: in the Authorization header or as access_token, not both'),
          example('token_in_url_refused', TOKEN_IN_URL_REFUSED),
          gone('msg_01KAT3Z4K8Q2W5N7X9Y0A1B2C3'),
          example('streams_limited', shareTaken('token', 256)),
          example('streams_limited', shareTaken('address', 256)),
          example('streams_full', '256 event streams are open, the most this process serves (EVENTS_MAX_STREAMS): retry later'),
        ],
      },
    },
    async (request, reply) => {
      const { limit = FEED_LIMIT_DEFAULT, type } = request.query;
      vary(reply, 'Accept');
      // Where to start: the cursor of a Link, or `after` (an event id, the alias); a stream takes either.
      const scope = typeScope(type);
      const after = startAfter(request.query, 'events', scope, 'type');
      if (wantsStream(request.headers.accept)) {
        checkUnversionedRead(request);
        const lastEventId = request.headers['last-event-id'];
        // The auth hook has verified the token: every route but the public ones has a principal.
        const owner = { principal: request.principal!, address: addressKey(request.ip) };
        // Prefer: int64=string: the events' plant ids as strings (http/int64-preference.ts; a page's are written so as it is sent).
        const int64 = prefersInt64Strings(request.headers.prefer) ? request.routeOptions.config.int64?.answer : undefined;
        // A share of the streams taken is another limit than the request budget, which has requests left.
        const refused = (error: unknown): never => {
          if (error instanceof HttpError && error.statusCode === 429) withoutRequestBudget(reply);
          throw error;
        };
        if (request.method === 'HEAD') {
          // The head a stream would have, with no stream: one opened for a HEAD would hold its share of the
          // streams while nothing reads it, its connection left open, the token refused 429 from then on. Its
          // status is the GET's (a share taken: 429; every stream: 503), and, a stream having no length, so
          // is its lack of a Content-Length: an empty stream, which Fastify's HEAD gives none.
          try {
            feed.checkStream(owner);
          } catch (error) {
            refused(error);
          }
          const start = lastEventId ? lastEventId : after;
          if (start !== undefined) await feed.position(start);
          reply.type(`${STREAM}; charset=utf-8`).header('x-accel-buffering', 'no');
          if (int64 !== undefined) int64Applied(reply);
          return reply.send(Readable.from([]) as unknown as []);
        }
        const stream = await feed.openStream(lastEventId ? lastEventId : after, type, owner, int64).catch(refused);
        // A client that hangs up sends FIN; the server allows half-open connections (http/transport.ts), so
        // without this the stream would live on until a heartbeat fails to be written.
        const socket = request.raw.socket;
        const hangUp = () => stream.destroy();
        socket.once('end', hangUp);
        stream.once('close', () => socket.off('end', hangUp));
        // Connection: close: once the stream ends (the server stopping, or handing over to a new worker), its
        // connection ends with it, and the client reconnects on a new one, never on one that is going away.
        reply.type(`${STREAM}; charset=utf-8`).header('x-accel-buffering', 'no').header('connection', 'close');
        if (int64 !== undefined) int64Applied(reply);
        // A stream is sent as it is, not through the JSON serializer the 200 schema types the reply for.
        return reply.send(stream as unknown as []);
      }
      const position = after === undefined ? FEED_START : await feed.position(after);
      const { events: page, examinedTo } = await events.page({ after: position, limit: limit + 1, types: type });
      // Retention may have deleted the events after the cursor since it was found: the page would skip them.
      if (after !== undefined && !(await events.holds(position))) throw gone(after);
      const shown = page.length > limit ? page.slice(0, limit) : page;
      // More follow; or the read of some types examined its window of events first: go on after the last one examined.
      const next = shown.length < page.length ? shown.at(-1)!.id : examinedTo;
      if (next !== undefined) reply.header('link', nextPageLink(request, nextPage(pageLinks, 'events', scope, next), ['access_token']));
      // Each event's stored body, its id in front, sent as it is, with its ETag (or 304).
      return sendRevalidated(request, reply, `[${shown.map(eventJson).join(',')}]`);
    },
  );

  done();
};
