import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { REVALIDATE_PRIVATE, revalidationHeaders } from '../http/caching.js';
import { createOnly, etag, ifMatch, ifNoneMatch, noneMatch } from '../http/conditional.js';
import { errorResponses, HttpError, NoContent } from '../http/errors.js';
import { KEY_STATUSES } from '../http/idempotency.js';
import { example } from '../http/error-codes.js';
import { writeOf, type Writes } from '../http/writes.js';
import { answerPut, exists, notFound, preconditionFailed } from './answers.js';
import { WARNING_HEADERS } from '../http/unknown-fields.js';
import type { IfMatch, IfNoneMatch, PlantStore } from '../store/store.js';
import type { PlantId } from '../model/plant-id.js';
import {
  CreateHeaders,
  DeleteHeaders,
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
 * The plant resource: POST /plants as the specification fixes it, and a plant by its id (read, replace,
 * merge-patch, delete); the list and exports are list-route.ts's, the bulk import import-route.ts's. Each
 * route's schema validates the request, serializes the answer, documents it (OpenAPI) and types the
 * handler; handlers validate nothing themselves and call the store. Every write answers the plant's
 * new ETag; If-Match makes a write conditional, settled by the database.
 */

function idMismatch(bodyId: PlantId, pathId: PlantId): HttpError {
  return new HttpError('id_mismatch', `body.id ${bodyId} does not match the id ${pathId} in the path`, { field: 'body.id' });
}

/** A body may repeat the path's id, but not contradict it. */
function checkBodyId(bodyId: PlantId | undefined, pathId: PlantId): void {
  // Compare as bigint: the path and the body may hold the same id as number and bigint.
  if (bodyId !== undefined && BigInt(bodyId) !== BigInt(pathId)) throw idMismatch(bodyId, pathId);
}

/** The OpenAPI document's examples of these routes' errors: the messages above, as they read for plant 1. */
const NOT_FOUND = notFound(1);
const IF_MATCH_FAILED = preconditionFailed(1, [7]);
const EXISTS = exists(1);

// Header descriptions are Markdown in /docs: `"<version>"` outside a code span would be taken for HTML and vanish.
const ETAG_HEADER = {
  ETag: { description: 'The version of the plant as stored, a strong entity tag: `"<version>"`, such as `"7"`', schema: { type: 'string' } },
};
/** GET /plants/{id}'s: the version as its ETag, revalidated. */
const READ_CACHING = revalidationHeaders('version');
/** POST /plants's Warning: an unknown field's, and the replacement's. */
const REPLACED_WARNING = {
  Warning: {
    description: `${WARNING_HEADERS.Warning.description}; \`replaced the stored plant 1\` when a plant with the id existed (send \`If-None-Match: *\` to only create)`,
    schema: { type: 'string' },
  },
};

export const plantRoutes: FastifyPluginCallbackTypebox<{ plants: PlantStore; writes: Writes }> = (app, { plants, writes }, done) => {
  /**
   * The preconditions of a PATCH or DELETE, for the store; `If-None-Match: *` is settled here: it holds only
   * where no plant exists, where these writes answer 404, so it never lets one through (RFC 9110 §13.2.2:
   * If-Match judged first, a missing plant failing it).
   */
  async function writePreconditions(
    id: PlantId,
    headers: { 'if-match'?: string | undefined; 'if-none-match'?: string | undefined },
  ): Promise<{ condition: IfMatch | undefined; unless: IfNoneMatch | undefined }> {
    const condition = ifMatch(headers['if-match']);
    if (createOnly(headers['if-none-match'])) {
      const found = await plants.get(id);
      if (found === undefined) throw condition === undefined ? notFound(id) : preconditionFailed(id, condition);
      if (condition !== undefined && condition !== '*' && !condition.includes(found.version)) throw preconditionFailed(id, condition);
      throw exists(id);
    }
    return { condition, unless: ifNoneMatch(headers['if-none-match']) };
  }

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
        bodyExample: { id: 1, name: 'Monstera', tag: 'tropical' },
        response: { 200: Plant, ...errorResponses(400, 401, 403, 412, 413, 415, 503, ...KEY_STATUSES) },
        responseDescriptions: { 200: 'Plant response' },
        responseHeaders: { 200: { ...ETAG_HEADER, ...REPLACED_WARNING } },
        errorExamples: [
          example('validation_failed', 'body.name must not be empty', 'body.name'),
          example('validation_failed', 'body.id must be an integer', 'body.id'),
          EXISTS,
          IF_MATCH_FAILED,
        ],
      },
    },
    async (request, reply) => {
      const { id, name, tag } = request.body;
      const { headers } = request;
      const plant = tag === undefined ? { id, name } : { id, name, tag };
      const unless = headers['if-none-match'];
      const put = { plant, createOnly: createOnly(unless), ifMatch: ifMatch(headers['if-match']), ifNoneMatch: ifNoneMatch(unless) };
      return writes.apply(reply, writeOf(request, 'put', put), answerPut);
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
        response: { 200: StoredPlant, 304: NoContent, ...errorResponses(400, 401, 403, 404, 412, 503) },
        responseDescriptions: { 200: 'The plant', 304: 'Not modified: the ETag the client holds is current' },
        responseHeaders: { 200: READ_CACHING, 304: READ_CACHING },
        errorExamples: [
          NOT_FOUND,
          IF_MATCH_FAILED,
          example(
            'validation_failed',
            'headers.if-none-match must be * or entity tags, each in its double quotes as the ETag header gives it ("17", not 17), comma-separated',
            'headers.if-none-match',
          ),
        ],
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const found = await plants.get(id);
      if (!found) throw notFound(id);
      // The version is the ETag: nothing hashed. `private, no-cache`: kept by the client, revalidated before use.
      reply.header('etag', etag(found.version)).header('cache-control', REVALIDATE_PRIVATE);
      const { headers } = request;
      // If-Match first, then If-None-Match (RFC 9110 §13.2.2): a GET without either reads two absent properties.
      if (headers['if-match'] !== undefined) {
        const condition = ifMatch(headers['if-match'])!;
        if (condition !== '*' && !condition.includes(found.version)) throw preconditionFailed(id, condition);
      }
      if (noneMatch(headers['if-none-match'], found.version)) return reply.code(304).send();
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
        bodyExample: { name: 'Monstera', tag: 'tropical' },
        response: { 200: StoredPlant, 201: StoredPlant, ...errorResponses(400, 401, 403, 412, 413, 415, 503) },
        responseDescriptions: { 200: 'The plant, replaced', 201: 'The plant, created' },
        errorExamples: [example('validation_failed', 'body.name is required', 'body.name'), idMismatch(2, 1), IF_MATCH_FAILED, EXISTS],
        responseHeaders: {
          200: ETAG_HEADER,
          201: { ...ETAG_HEADER, Location: { description: 'The URL of the plant created', schema: { type: 'string' } } },
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { name, tag } = request.body;
      checkBodyId(request.body.id, id);
      const plant = tag === undefined ? { id, name } : { id, name, tag };
      const { headers } = request;
      const condition = ifMatch(headers['if-match']);
      const unless = ifNoneMatch(headers['if-none-match']);
      const result = await plants.put(plant, { createOnly: createOnly(headers['if-none-match']), ifMatch: condition, ifNoneMatch: unless });
      if (result.outcome === 'exists') throw exists(id);
      if (result.outcome === 'precondition-failed') throw preconditionFailed(id, condition, unless);
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
        bodyExample: { tag: 'shade' },
        response: { 200: StoredPlant, ...errorResponses(400, 401, 403, 404, 412, 413, 415, 503) },
        responseDescriptions: { 200: 'The plant, changed' },
        responseHeaders: { 200: ETAG_HEADER },
        errorExamples: [example('validation_failed', 'body.tag must be a string or null', 'body.tag'), idMismatch(2, 1), NOT_FOUND, IF_MATCH_FAILED],
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      checkBodyId(request.body.id, id);
      const { condition, unless } = await writePreconditions(id, request.headers);
      const result = await plants.patch(id, { name: request.body.name, tag: request.body.tag }, { ifMatch: condition, ifNoneMatch: unless });
      if (result === 'not-found') throw notFound(id);
      if (result === 'precondition-failed') throw preconditionFailed(id, condition, unless);
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
        errorExamples: [NOT_FOUND, IF_MATCH_FAILED],
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { condition, unless } = await writePreconditions(id, request.headers);
      const result = await plants.delete(id, { ifMatch: condition, ifNoneMatch: unless });
      if (result === 'not-found') throw notFound(id);
      if (result === 'precondition-failed') throw preconditionFailed(id, condition, unless);
      return reply.code(204).send();
    },
  );

  done();
};
