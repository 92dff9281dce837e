import { Readable } from 'node:stream';
import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { checkUnversionedRead, NOT_MODIFIED, READ_PRECONDITION_FAILED, revalidationHeaders, sendRevalidated, vary } from '../http/caching.js';
import { errorResponses, HttpError, NoContent } from '../http/errors.js';
import { example } from '../http/error-codes.js';
import { bothGiven, type PageLinkForm } from '../http/cursors.js';
import { nextPageLink } from '../http/paging.js';
import { prefersExactCount } from '../http/preferences.js';
import { StoredPlant } from '../model/plant.js';
import type { PageKey, PlantStore } from '../store/store.js';
import { batchIds, notWithIds, readBatch, sendBatch } from './batch-read.js';
import { decodeCursor, encodeCursor, type CursorScope } from './cursor.js';
import { countable, exportStream, idleLimit, MEDIA_TYPES, negotiate } from './export.js';
import { LIST_LIMIT_DEFAULT, ListHeaders, ListQuery } from './schema.js';

/**
 * GET /plants: the plants found by name (q) and tags, in an order, a page at a time by key (the Link
 * header's cursor), or every one of them exported as NDJSON or CSV from one snapshot (export.ts), as
 * the client's Accept or `format` asks.
 */

/**
 * Where a page starts: after the key of its cursor (made for this very list, else 400), or after the id
 * `after` names (sort=id only: in the other orders an id alone is no place in the list), or at the start.
 */
function startKey({ after, cursor }: Pick<ListQuery, 'after' | 'cursor'>, scope: CursorScope): PageKey | undefined {
  if (after !== undefined && cursor !== undefined) throw bothGiven();
  if (cursor !== undefined) return decodeCursor(cursor, scope);
  if (after === undefined) return undefined;
  if (scope.sort !== 'id') {
    throw new HttpError(
      'conflicting_parameters',
      `querystring.after applies to sort=id only, not sort=${scope.sort}: follow the cursor of the Link header instead`,
      { field: 'querystring.after' },
    );
  }
  return { id: after };
}

/** What the answer depends on besides the URL: Accept picks JSON, NDJSON or CSV; Prefer: count=exact adds the total. */
const VARIES = ['Accept', 'Prefer'];
/** A page's caching headers; an export is not kept (`no-store`, no ETag), but varies alike. */
const PAGE_CACHING = revalidationHeaders('weak', VARIES);

const LIST_HEADERS = {
  Link: {
    description: '`<…>; rel="next"` while more plants remain (a page, not an export): this request with the cursor of the next page',
    schema: { type: 'string' },
  },
  'X-Total-Count': {
    description: 'With `Prefer: count=exact`: how many plants q and tag select (all the pages)',
    schema: { type: 'integer', minimum: 0 },
  },
  'Preference-Applied': { description: '`count=exact`, when it was asked for', schema: { type: 'string' } },
  'Content-Disposition': { description: 'CSV: `attachment; filename="plants.csv"`', schema: { type: 'string' } },
  'Missing-Ids': {
    description: 'A batch read (`id=…`): the ids given that name no plant (left out of the answer), comma-separated, in the order given',
    schema: { type: 'string' },
  },
  ...PAGE_CACHING,
};

/** EXPORT_IDLE_TIMEOUT_MS: none, no limit (the benchmarks' bare routes). */
export const plantListRoute: FastifyPluginCallbackTypebox<{ plants: PlantStore; exportIdleTimeoutMs?: number; pageLinks?: PageLinkForm }> = (
  app,
  { plants, exportIdleTimeoutMs, pageLinks = 'signed' },
  done,
) => {
  app.get(
    '/plants',
    {
      config: { auth: 'plants:read' },
      schema: {
        operationId: 'listPlants',
        tags: ['plants'],
        summary:
          'Lists plants, found by name (q) and tags, by id or by name, a page at a time (Link: rel="next" with a cursor while more remain), or exports them all; or reads the plants named (id=1&id=2)',
        querystring: ListQuery,
        headers: ListHeaders,
        response: { 200: Type.Array(StoredPlant), 304: NoContent, ...errorResponses(400, 401, 403, 412, 503) },
        responseDescriptions: {
          200: 'A page of plants; or, asked for NDJSON or CSV, every plant q and tag select, streamed; or, with id, the plants named',
          304: NOT_MODIFIED,
        },
        errorExamples: [
          READ_PRECONDITION_FAILED,
          example('validation_failed', 'querystring.limit must be at most 1000', 'querystring.limit'),
          example(
            'invalid_cursor',
            'querystring.cursor is not a cursor this service made (it does not check out: changed, or made elsewhere): take it from a Link header as it is',
            'querystring.cursor',
          ),
          example(
            'conflicting_parameters',
            'querystring.cursor and querystring.after cannot be given together: the cursor alone says where the page starts',
            'querystring.after',
          ),
          example('conflicting_parameters', notWithIds(['q']), 'querystring.id'),
        ],
        responseHeaders: { 200: LIST_HEADERS, 304: PAGE_CACHING },
        responseMediaTypes: {
          200: {
            'application/x-ndjson': { schema: { type: 'string', description: 'One plant per line, `{"id":…,"name":…,"tag":…}`, ids exact' } },
            'text/csv': {
              schema: {
                type: 'string',
                description: "RFC 4180, CRLF, header id,name,tag; a cell starting with =, +, -, @, tab or CR is prefixed with '",
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const { limit = LIST_LIMIT_DEFAULT, q, tag: tags = [], sort = 'id', format } = request.query;
      vary(reply, ...VARIES);
      const filter = { q, tags };
      const chosen = negotiate(request.headers.accept, format);
      const ids = batchIds(request.query);
      if (ids !== undefined) return sendBatch(request, reply, await readBatch(plants, ids), chosen);
      const count = prefersExactCount(request.headers.prefer) && countable(q);
      if (chosen !== 'json') {
        // An export is every plant: a cursor does not apply, but one the service did not make is still 400, as on every list.
        startKey(request.query, { ...filter, sort });
        checkUnversionedRead(request);
        const snapshot = await plants.export({ ...filter, sort });
        if (count) reply.header('x-total-count', String(await snapshot.count())).header('preference-applied', 'count=exact');
        if (chosen === 'csv') reply.header('content-disposition', 'attachment; filename="plants.csv"');
        if (request.method === 'HEAD') {
          // The export's head alone: Fastify's HEAD reads a stream to its end to throw it away, and twelve HEADs
          // of a 200,000-plant export stalled the store for seconds.
          await snapshot.close();
          return reply.type(`${MEDIA_TYPES[chosen]}; charset=utf-8`).send(Readable.from([]) as unknown as StoredPlant[]);
        }
        // A stream is sent as it is, not through the JSON serializer the 200 schema types the reply for.
        const idle = exportIdleTimeoutMs === undefined ? undefined : idleLimit(exportIdleTimeoutMs, request.log);
        const stream = exportStream(snapshot, chosen, idle) as unknown as StoredPlant[];
        return reply.type(`${MEDIA_TYPES[chosen]}; charset=utf-8`).send(stream);
      }
      const after = startKey(request.query, { ...filter, sort });
      const [page, total] = await Promise.all([plants.page({ limit, sort, after, ...filter }), count ? plants.count(filter) : undefined]);
      if (page.next !== undefined) reply.header('link', nextPageLink(request, ['cursor', encodeCursor(page.next, { ...filter, sort }, pageLinks)]));
      if (total !== undefined) reply.header('x-total-count', String(total)).header('preference-applied', 'count=exact');
      // The store made the page's JSON (the same bytes the 200 schema's serializer would write; the store
      // contract tests compare them), sent as it is, with its ETag (or 304).
      return sendRevalidated(request, reply, page.json);
    },
  );

  done();
};
