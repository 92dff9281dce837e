import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { createOnly, etag, ifMatch, noneMatch } from '../http/conditional.js';
import { errorResponses, HttpError, NoContent } from '../http/errors.js';
import { KEY_EXAMPLES, KEY_STATUSES, REPLAYED_HEADER, type Idempotency } from '../http/idempotency.js';
import { answerPut, exists, notFound, preconditionFailed } from './answers.js';
import { WARNING_HEADERS } from '../http/unknown-fields.js';
import { nextPageLink } from '../http/paging.js';
import type { PageKey, PlantStore } from '../store/store.js';
import { decodeCursor, encodeCursor, type CursorScope } from './cursor.js';
import { countable, exportStream, idleLimit, MEDIA_TYPES, negotiate } from './export.js';
import { prefersExactCount } from '../http/preferences.js';
import type { PlantId } from '../model/plant-id.js';
import {
  CreateHeaders,
  DeleteHeaders,
  LIST_LIMIT_DEFAULT,
  ListHeaders,
  ListQuery,
  NewPlant,
  PatchHeaders,
  Plant,
  PlantIdParams,
  PlantMergePatch,
  PlantReplacement,
  ReadHeaders,
  ReplaceHeaders,
} from './schema.js';
import { StoredPlant } from '../model/plant.js';

/**
 * The plant resource: POST /plants as the specification fixes it, and the rest of the resource. Each
 * route's schema validates the request, serializes the answer, documents it (OpenAPI) and types the
 * handler; handlers validate nothing themselves and call the store. Every write answers the plant's
 * new ETag; If-Match makes a write conditional, settled by the database.
 */

function idMismatch(bodyId: PlantId, pathId: PlantId): HttpError {
  return new HttpError(400, `body.id ${bodyId} does not match the id ${pathId} in the path`);
}

/**
 * Where a page starts: after the key of its cursor (made for this very list, else 400), or after the id
 * `after` names (sort=id only: in the other orders an id alone is no place in the list), or at the start.
 */
function startKey({ after, cursor }: Pick<ListQuery, 'after' | 'cursor'>, scope: CursorScope): PageKey | undefined {
  if (after !== undefined && cursor !== undefined) {
    throw new HttpError(400, 'querystring.cursor and querystring.after cannot be given together: the cursor alone says where the page starts');
  }
  if (cursor !== undefined) return decodeCursor(cursor, scope);
  if (after === undefined) return undefined;
  if (scope.sort !== 'id') {
    throw new HttpError(400, `querystring.after applies to sort=id only, not sort=${scope.sort}: follow the cursor of the Link header instead`);
  }
  return { id: after };
}

/** A body may repeat the path's id, but not contradict it. */
function checkBodyId(bodyId: PlantId | undefined, pathId: PlantId): void {
  // Compare as bigint: the path and the body may hold the same id as number and bigint.
  if (bodyId !== undefined && BigInt(bodyId) !== BigInt(pathId)) throw idMismatch(bodyId, pathId);
}

/** The OpenAPI document's examples of these routes' errors: the messages above, as they read for plant 1. */
const NOT_FOUND = notFound(1).message;
const IF_MATCH_FAILED = preconditionFailed(1, [7]).message;
const EXISTS = exists(1).message;

// Header descriptions are Markdown in /docs: `"<version>"` outside a code span would be taken for HTML and vanish.
const ETAG_HEADER = {
  ETag: { description: 'The version of the plant as stored, a strong entity tag: `"<version>"`, such as `"7"`', schema: { type: 'string' } },
};
/** POST /plants's Warning: an unknown field's, and the replacement's. */
const REPLACED_WARNING = {
  Warning: {
    description: `${WARNING_HEADERS.Warning.description}; \`replaced the stored plant 1\` when a plant with the id existed (send \`If-None-Match: *\` to only create)`,
    schema: { type: 'string' },
  },
};
const LIST_HEADERS = {
  Link: {
    description: '`<…>; rel="next"` while more plants remain (a page, not an export): this request with the cursor of the next page',
    schema: { type: 'string' },
  },
  'X-Total-Count': { description: 'With `Prefer: count=exact`: how many plants q and tag select (all the pages)', schema: { type: 'string' } },
  'Preference-Applied': { description: '`count=exact`, when it was asked for', schema: { type: 'string' } },
  'Content-Disposition': { description: 'CSV: `attachment; filename="plants.csv"`', schema: { type: 'string' } },
};

/** EXPORT_IDLE_TIMEOUT_MS: none, no limit (the benchmarks' bare routes). */
export const plantRoutes: FastifyPluginCallbackTypebox<{ plants: PlantStore; idempotency: Idempotency; exportIdleTimeoutMs?: number }> = (
  app,
  options,
  done,
) => {
  const { plants, idempotency, exportIdleTimeoutMs } = options;
  app.post(
    '/plants',
    {
      config: { auth: 'plants:write' },
      schema: {
        operationId: 'addPlant',
        tags: ['plants'],
        summary: 'Creates a new plant in the store (or replaces the plant with that id)',
        headers: CreateHeaders,
        body: NewPlant,
        response: { 200: Plant, ...errorResponses(400, 401, 403, 412, 413, 415, 503, ...KEY_STATUSES) },
        responseDescriptions: { 200: 'Plant response' },
        responseHeaders: { 200: { ...ETAG_HEADER, ...REPLAYED_HEADER, ...WARNING_HEADERS, ...REPLACED_WARNING } },
        errorExamples: { 400: ['body.name must not be empty', 'body.id must be an integer'], 412: [EXISTS, IF_MATCH_FAILED], ...KEY_EXAMPLES },
      },
    },
    async (request, reply) => {
      const { id, name, tag } = request.body;
      const condition = ifMatch(request.headers['if-match']);
      const plant = tag === undefined ? { id, name } : { id, name, tag };
      const options = { createOnly: createOnly(request.headers['if-none-match']), ifMatch: condition };
      const key = request.headers['idempotency-key'];
      if (key !== undefined) {
        return idempotency.run(request, reply, key, { kind: 'put', plant, options }, (put) => answerPut(reply, put, plant, condition));
      }
      return answerPut(reply, await plants.put(plant, options), plant, condition);
    },
  );

  app.get(
    '/plants',
    {
      config: { auth: 'plants:read' },
      schema: {
        operationId: 'listPlants',
        tags: ['plants'],
        summary:
          'Lists plants, found by name (q) and tags, by id or by name, a page at a time (Link: rel="next" with a cursor while more remain), or exports them all',
        querystring: ListQuery,
        headers: ListHeaders,
        response: { 200: Type.Array(StoredPlant), ...errorResponses(400, 401, 403, 503) },
        responseDescriptions: { 200: 'A page of plants; or, asked for NDJSON or CSV, every plant q and tag select, streamed' },
        errorExamples: { 400: 'querystring.limit must be at most 1000' },
        responseHeaders: { 200: LIST_HEADERS },
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
      const filter = { q, tags };
      const chosen = negotiate(request.headers.accept, format);
      const count = prefersExactCount(request.headers.prefer) && countable(q);
      if (chosen !== 'json') {
        const snapshot = await plants.export({ ...filter, sort });
        if (count) reply.header('x-total-count', String(await snapshot.count())).header('preference-applied', 'count=exact');
        if (chosen === 'csv') reply.header('content-disposition', 'attachment; filename="plants.csv"');
        // A stream is sent as it is, not through the JSON serializer the 200 schema types the reply for.
        const idle = exportIdleTimeoutMs === undefined ? undefined : idleLimit(exportIdleTimeoutMs, request.log);
        const stream = exportStream(snapshot, chosen, idle) as unknown as StoredPlant[];
        return reply.type(`${MEDIA_TYPES[chosen]}; charset=utf-8`).send(stream);
      }
      const after = startKey(request.query, { ...filter, sort });
      const [page, total] = await Promise.all([plants.page({ limit, sort, after, ...filter }), count ? plants.count(filter) : undefined]);
      if (page.next !== undefined) reply.header('link', nextPageLink(request, encodeCursor(page.next, { ...filter, sort }), 'cursor'));
      if (total !== undefined) reply.header('x-total-count', String(total)).header('preference-applied', 'count=exact');
      // The store made the page's JSON (the same bytes the 200 schema's serializer would write; the store
      // contract tests compare them), and JSON text with a JSON type is sent as it is.
      return reply.type('application/json; charset=utf-8').send(page.json as unknown as StoredPlant[]);
    },
  );

  app.get(
    '/plants/:id',
    {
      config: { auth: 'plants:read' },
      schema: {
        operationId: 'getPlant',
        tags: ['plants'],
        summary: 'Reads one plant (304 when If-None-Match names its current ETag)',
        params: PlantIdParams,
        headers: ReadHeaders,
        response: { 200: StoredPlant, 304: NoContent, ...errorResponses(400, 401, 403, 404, 503) },
        responseDescriptions: { 200: 'The plant', 304: 'Not modified: the ETag the client holds is current' },
        responseHeaders: { 200: ETAG_HEADER, 304: ETAG_HEADER },
        errorExamples: { 400: 'params.id must be an integer', 404: NOT_FOUND },
      },
    },
    async (request, reply) => {
      const found = await plants.get(request.params.id);
      if (!found) throw notFound(request.params.id);
      reply.header('etag', etag(found.version));
      if (noneMatch(request.headers['if-none-match'], found.version)) return reply.code(304).send();
      return reply.send(found.plant);
    },
  );

  app.put(
    '/plants/:id',
    {
      config: { auth: 'plants:write' },
      schema: {
        operationId: 'replacePlant',
        tags: ['plants'],
        summary: 'Replaces the plant with this id, or creates it (If-Match: only a version you hold; If-None-Match: *: only create)',
        params: PlantIdParams,
        headers: ReplaceHeaders,
        body: PlantReplacement,
        response: { 200: StoredPlant, 201: StoredPlant, ...errorResponses(400, 401, 403, 412, 413, 415, 503) },
        responseDescriptions: { 200: 'The plant, replaced', 201: 'The plant, created' },
        errorExamples: { 400: ['body.name is required', idMismatch(2, 1).message], 412: [IF_MATCH_FAILED, EXISTS] },
        responseHeaders: {
          200: { ...ETAG_HEADER, ...WARNING_HEADERS },
          201: { ...ETAG_HEADER, ...WARNING_HEADERS, Location: { description: 'The URL of the plant created', schema: { type: 'string' } } },
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { name, tag } = request.body;
      checkBodyId(request.body.id, id);
      const plant = tag === undefined ? { id, name } : { id, name, tag };
      const condition = ifMatch(request.headers['if-match']);
      const result = await plants.put(plant, { createOnly: createOnly(request.headers['if-none-match']), ifMatch: condition });
      if (result.outcome === 'exists') throw exists(id);
      if (result.outcome === 'precondition-failed') throw preconditionFailed(id, condition!);
      reply.header('etag', etag(result.version));
      if (result.outcome === 'created') return reply.code(201).header('location', `/plants/${id}`).send(plant);
      return reply.send(plant);
    },
  );

  app.patch(
    '/plants/:id',
    {
      config: { auth: 'plants:write' },
      schema: {
        operationId: 'patchPlant',
        tags: ['plants'],
        summary: 'Changes some fields of a plant (JSON merge patch; "tag": null removes the tag)',
        params: PlantIdParams,
        headers: PatchHeaders,
        body: PlantMergePatch,
        response: { 200: StoredPlant, ...errorResponses(400, 401, 403, 404, 412, 413, 415, 503) },
        responseDescriptions: { 200: 'The plant, changed' },
        responseHeaders: { 200: { ...ETAG_HEADER, ...WARNING_HEADERS } },
        errorExamples: { 400: 'body.tag must be a string or null', 404: NOT_FOUND, 412: IF_MATCH_FAILED },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      checkBodyId(request.body.id, id);
      const condition = ifMatch(request.headers['if-match']);
      const result = await plants.patch(id, { name: request.body.name, tag: request.body.tag }, { ifMatch: condition });
      if (result === 'not-found') throw notFound(id);
      if (result === 'precondition-failed') throw preconditionFailed(id, condition!);
      return reply.header('etag', etag(result.version)).send(result.plant);
    },
  );

  app.delete(
    '/plants/:id',
    {
      config: { auth: 'plants:write' },
      schema: {
        operationId: 'deletePlant',
        tags: ['plants'],
        summary: 'Deletes a plant (If-Match: only at a version you hold)',
        params: PlantIdParams,
        headers: DeleteHeaders,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 412, 503) },
        responseDescriptions: { 204: 'Plant deleted' },
        errorExamples: { 404: NOT_FOUND, 412: IF_MATCH_FAILED },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const condition = ifMatch(request.headers['if-match']);
      const result = await plants.delete(id, { ifMatch: condition });
      if (result === 'not-found') throw notFound(id);
      if (result === 'precondition-failed') throw preconditionFailed(id, condition!);
      return reply.code(204).send();
    },
  );

  done();
};
