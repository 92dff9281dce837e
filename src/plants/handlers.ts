import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http/errors.js';
import type { PlantStore } from '../store/store.js';
import {
  LIST_LIMIT_DEFAULT,
  type CreateHeaders,
  type ListQuery,
  type NewPlant,
  type PlantId,
  type PlantIdParams,
  type PlantMergePatch,
  type PlantReplacement,
} from './schema.js';

type Req<T extends { Body?: unknown; Params?: unknown; Querystring?: unknown; Headers?: unknown }> = FastifyRequest<T>;

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

/** The query string of the next page: the request's own parameters with `after` moved on. */
function nextPageLink(request: FastifyRequest, lastId: PlantId): string {
  const at = request.url.indexOf('?');
  const params = new URLSearchParams(at === -1 ? '' : request.url.slice(at + 1));
  params.set('after', String(lastId));
  return `</plants?${params.toString()}>; rel="next"`;
}

/** The plant operations: each validates nothing itself (the route schemas did) and calls the store. */
export function plantHandlers(plants: PlantStore) {
  return {
    /** POST /plants, the specified operation: create or replace, answer the Plant shape (no id). */
    async create(request: Req<{ Body: NewPlant; Headers: CreateHeaders }>, reply: FastifyReply) {
      const { id, name, tag } = request.body;
      const createOnly = request.headers['if-none-match']?.trim() === '*';
      const outcome = await plants.put(tag === undefined ? { id, name } : { id, name, tag }, { createOnly });
      if (outcome === 'exists') throw new HttpError(412, `a plant with id ${id} already exists (If-None-Match: *)`);
      return reply.code(200).send({ name, tag });
    },

    async list(request: Req<{ Querystring: ListQuery }>, reply: FastifyReply) {
      const { limit = LIST_LIMIT_DEFAULT, after, tag } = request.query;
      // One more than asked tells whether another page follows, without a COUNT.
      const page = await plants.list({ limit: limit + 1, after, tag });
      if (page.length > limit) {
        page.length = limit;
        reply.header('link', nextPageLink(request, page[limit - 1]!.id));
      }
      return reply.send(page);
    },

    async read(request: Req<{ Params: PlantIdParams }>, reply: FastifyReply) {
      const plant = await plants.get(request.params.id);
      if (!plant) throw notFound(request.params.id);
      return reply.send(plant);
    },

    async replace(request: Req<{ Params: PlantIdParams; Body: PlantReplacement }>, reply: FastifyReply) {
      const { id } = request.params;
      const { name, tag } = request.body;
      checkBodyId(request.body.id, id);
      const plant = tag === undefined ? { id, name } : { id, name, tag };
      const outcome = await plants.put(plant);
      if (outcome === 'created') reply.code(201).header('location', `/plants/${id}`);
      return reply.send(plant);
    },

    async patch(request: Req<{ Params: PlantIdParams; Body: PlantMergePatch }>, reply: FastifyReply) {
      const { id } = request.params;
      checkBodyId(request.body.id, id);
      const plant = await plants.patch(id, { name: request.body.name, tag: request.body.tag });
      if (!plant) throw notFound(id);
      return reply.send(plant);
    },

    async remove(request: Req<{ Params: PlantIdParams }>, reply: FastifyReply) {
      if (!(await plants.delete(request.params.id))) throw notFound(request.params.id);
      return reply.code(204).send();
    },
  };
}
