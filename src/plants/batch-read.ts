import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkUnversionedRead, sendRevalidated } from '../http/caching.js';
import { HttpError } from '../http/errors.js';
import { orList } from '../words.js';
import type { PlantId } from '../model/plant-id.js';
import type { StoredPlant } from '../model/plant.js';
import type { PlantStore } from '../store/store.js';
import { CSV_HEADER, csvLine, MEDIA_TYPES, ndjsonLine, type ListFormat } from './export.js';
import type { ListQuery } from './schema.js';

/**
 * GET /plants?id=1&id=2…: the plants named, read together, in the order named: a client showing 50 known
 * plants makes one request, not 50. The answer is the list's shape (an array of plants, or the same plants
 * as NDJSON or CSV, as Accept or `format` asks); a plant that does not exist is left out, and the ids that
 * named none are said in the `Missing-Ids` header, so the shape stays the one every list has. An id given
 * twice is answered once, at its first place.
 */

/** The list parameters that choose, order or page plants: a batch read names its plants and their order itself. */
const NOT_WITH_IDS = ['q', 'tag', 'sort', 'cursor', 'after', 'limit'] as const;

/** The ids of a batch read, or undefined for a list; 400 naming `id` when another list parameter came with them. */
export function batchIds(query: ListQuery): readonly PlantId[] | undefined {
  if (query.id === undefined) return undefined;
  const others = NOT_WITH_IDS.filter((name) => query[name] !== undefined);
  if (others.length > 0) throw new HttpError('conflicting_parameters', notWithIds(others), { field: 'querystring.id' });
  return query.id;
}

/** The 400 of a batch read with list parameters (the OpenAPI document's example too). */
export function notWithIds(others: readonly string[]): string {
  return `querystring.id cannot be given with ${orList(others.map((name) => `querystring.${name}`))}: a batch read answers the plants named, in the order named`;
}

export interface BatchAnswer {
  /** The plants found, each once, in the order their ids were first given. */
  plants: StoredPlant[];
  /** The ids that named no plant, each once, in the order given, as decimal text. */
  missing: string[];
}

export async function readBatch(plants: PlantStore, ids: readonly PlantId[]): Promise<BatchAnswer> {
  // The same id as a number and as a bigint is the same plant: compared by their decimal text.
  const distinct = new Map<string, PlantId>();
  for (const id of ids) if (!distinct.has(String(id))) distinct.set(String(id), id);
  const asked = [...distinct.values()];
  const found = await plants.getMany(asked);
  const answer: BatchAnswer = { plants: [], missing: [] };
  found.forEach((read, at) => (read ? answer.plants.push(read.plant) : answer.missing.push(String(asked[at]))));
  return answer;
}

/**
 * The answer: JSON with its ETag (a page's weak one, revalidated), or NDJSON or CSV as an export writes
 * them (not kept, as an export is not); `Missing-Ids` when an id named no plant.
 */
export function sendBatch(request: FastifyRequest, reply: FastifyReply, { plants, missing }: BatchAnswer, format: ListFormat): FastifyReply {
  if (missing.length > 0) reply.header('missing-ids', missing.join(', '));
  if (format === 'json') return sendRevalidated(request, reply, `[${plants.map((plant) => ndjsonLine(plant).slice(0, -1)).join(',')}]`);
  checkUnversionedRead(request);
  if (format === 'csv') reply.header('content-disposition', 'attachment; filename="plants.csv"');
  const text = format === 'csv' ? CSV_HEADER + plants.map(csvLine).join('') : plants.map(ndjsonLine).join('');
  return reply.type(`${MEDIA_TYPES[format]}; charset=utf-8`).send(text);
}
