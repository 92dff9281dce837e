import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, HttpError, NoContent } from '../http/errors.js';
import { nextPageLink } from '../http/paging.js';
import type { PlantStore } from '../store/store.js';
import type { PlantId } from './id.js';
import {
  CreateHeaders,
  LIST_LIMIT_DEFAULT,
  ListQuery,
  NewPlant,
  Plant,
  PlantIdParams,
  PlantMergePatch,
  PlantReplacement,
  StoredPlant,
} from './schema.js';

/**
 * The plant resource: POST /plants as the specification fixes it, and the rest of the resource. Each
 * route's schema validates the request, serializes the answer, documents it (OpenAPI) and types the
 * handler; handlers validate nothing themselves and call the store.
 */

function notFound(id: PlantId): HttpError {
  return new HttpError(404, `no plant with id ${id}`);
}

/** A body may repeat the path's id, but not contradict it. */
function checkBodyId(bodyId: PlantId | undefined, pathId: PlantId): void {
  // Compare as bigint: the path and the body may hold the same id as number and bigint.
  if (bodyId !== undefined && BigInt(bodyId) !== BigInt(pathId)) {
    throw new HttpError(400, `body.id ${bodyId} does not match the id ${pathId} in the path`);
  }
}

export const plantRoutes: FastifyPluginCallbackTypebox<{ plants: PlantStore }> = (app, { plants }, done) => {
  app.post(
    '/plants',
    {
      config: { auth: 'plants:write' },
      schema: {
        operationId: 'addPlant',
        summary: 'Creates a new plant in the store (or replaces the plant with that id)',
        headers: CreateHeaders,
        body: NewPlant,
        response: { 200: Plant, ...errorResponses(400, 401, 403, 412, 413, 415, 503) },
        responseDescriptions: { 200: 'Plant response' },
      },
    },
    async (request, reply) => {
      const { id, name, tag } = request.body;
      const createOnly = request.headers['if-none-match']?.trim() === '*';
      const outcome = await plants.put(tag === undefined ? { id, name } : { id, name, tag }, { createOnly });
      if (outcome === 'exists') throw new HttpError(412, `a plant with id ${id} already exists (If-None-Match: *)`);
      return reply.code(200).send({ name, tag });
    },
  );

  app.get(
    '/plants',
    {
      config: { auth: 'plants:read' },
      schema: {
        operationId: 'listPlants',
        summary: 'Lists plants in ascending id order, a page at a time (Link: rel="next" when more remain)',
        querystring: ListQuery,
        response: { 200: Type.Array(StoredPlant), ...errorResponses(400, 401, 403, 503) },
        responseDescriptions: { 200: 'A page of plants' },
      },
    },
    async (request, reply) => {
      const { limit = LIST_LIMIT_DEFAULT, after, tag } = request.query;
      // One more than asked tells whether another page follows, without a COUNT.
      const page = await plants.list({ limit: limit + 1, after, tag });
      if (page.length > limit) {
        page.length = limit;
        reply.header('link', nextPageLink(request, String(page[limit - 1]!.id)));
      }
      return reply.send(page);
    },
  );

  app.get(
    '/plants/:id',
    {
      config: { auth: 'plants:read' },
      schema: {
        operationId: 'getPlant',
        summary: 'Reads one plant',
        params: PlantIdParams,
        response: { 200: StoredPlant, ...errorResponses(400, 401, 403, 404, 503) },
        responseDescriptions: { 200: 'The plant' },
      },
    },
    async (request, reply) => {
      const plant = await plants.get(request.params.id);
      if (!plant) throw notFound(request.params.id);
      return reply.send(plant);
    },
  );

  app.put(
    '/plants/:id',
    {
      config: { auth: 'plants:write' },
      schema: {
        operationId: 'replacePlant',
        summary: 'Replaces the plant with this id, or creates it',
        params: PlantIdParams,
        body: PlantReplacement,
        response: { 200: StoredPlant, 201: StoredPlant, ...errorResponses(400, 401, 403, 413, 415, 503) },
        responseDescriptions: { 200: 'The plant, replaced', 201: 'The plant, created' },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { name, tag } = request.body;
      checkBodyId(request.body.id, id);
      const plant = tag === undefined ? { id, name } : { id, name, tag };
      const outcome = await plants.put(plant);
      if (outcome === 'created') return reply.code(201).header('location', `/plants/${id}`).send(plant);
      return reply.send(plant);
    },
  );

  app.patch(
    '/plants/:id',
    {
      config: { auth: 'plants:write' },
      schema: {
        operationId: 'patchPlant',
        summary: 'Changes some fields of a plant (JSON merge patch; "tag": null removes the tag)',
        params: PlantIdParams,
        body: PlantMergePatch,
        response: { 200: StoredPlant, ...errorResponses(400, 401, 403, 404, 413, 415, 503) },
        responseDescriptions: { 200: 'The plant, changed' },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      checkBodyId(request.body.id, id);
      const plant = await plants.patch(id, { name: request.body.name, tag: request.body.tag });
      if (!plant) throw notFound(id);
      return reply.send(plant);
    },
  );

  app.delete(
    '/plants/:id',
    {
      config: { auth: 'plants:write' },
      schema: {
        operationId: 'deletePlant',
        summary: 'Deletes a plant',
        params: PlantIdParams,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 503) },
        responseDescriptions: { 204: 'Plant deleted' },
      },
    },
    async (request, reply) => {
      if (!(await plants.delete(request.params.id))) throw notFound(request.params.id);
      return reply.code(204).send();
    },
  );
  done();
};
