import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorAnswer, JSON_TYPE, jsonAnswer, type Idempotency } from '../http/idempotency.js';
import type { HttpError } from '../http/errors.js';
import type { StoredPlant } from '../model/plant.js';
import { slot, type AnswerRecipe, type StoredAnswer } from '../store/idempotency.js';
import { ImportConflictError, type IfMatch, type PutOptions } from '../store/store.js';
import type { PlantId } from '../model/plant-id.js';
import { ImportTooLargeError } from './import-errors.js';

/**
 * POST /plants and POST /plants/import under an Idempotency-Key (http/idempotency.ts): the answers they
 * keep, one per outcome, as the routes send them without a key.
 */

/** A keyed request, as the route has it. */
export interface Keyed {
  request: FastifyRequest;
  reply: FastifyReply;
  /** The Idempotency-Key header. */
  key: string;
}

/** POST /plants: 200 with the plant's new ETag, or the 412 the put found (the route's own errors, made for this plant). */
export function keyedCreate(
  idempotency: Idempotency,
  { request, reply, key }: Keyed,
  plant: StoredPlant,
  options: PutOptions,
  refusals: { exists: (id: PlantId) => HttpError; preconditionFailed: (id: PlantId, condition: IfMatch) => HttpError },
): Promise<FastifyReply> {
  const done = jsonAnswer(reply, 200, { name: plant.name, tag: plant.tag }, { etag: `"${slot('version')}"` });
  // Only a put with If-None-Match: * (exists) or If-Match (precondition-failed) can be refused: the
  // refusals of the others are not made (an HttpError costs its stack, on the hot path).
  const answers: AnswerRecipe<'put'> = {
    created: done,
    replaced: done,
    ...(options.createOnly === true && { exists: errorAnswer(412, refusals.exists(plant.id).message) }),
    ...(options.ifMatch !== undefined && {
      'precondition-failed': errorAnswer(412, refusals.preconditionFailed(plant.id, options.ifMatch).message),
    }),
  };
  return idempotency.run(request, reply, key, (claim) => idempotency.store.put(plant, options, { ...claim, answers }));
}

/**
 * The 409 of a create-only import, as the store words it, the id a slot. JSON escapes the slot's U+0000
 * marks in the message; put back raw, they are a slot again (the message holds nothing a client sent).
 */
function conflictAnswer(): StoredAnswer {
  const answer = errorAnswer(409, new ImportConflictError(slot('id') as unknown as PlantId).message);
  return { ...answer, body: answer.body.replace(JSON.stringify(slot('id')).slice(1, -1), slot('id')) };
}

/** POST /plants/import: 200 with the counts, or the 409 of a create-only import that found an existing id. */
export const IMPORT_ANSWERS: AnswerRecipe<'import'> = {
  imported: { status: 200, headers: { 'content-type': JSON_TYPE }, body: `{"created":${slot('created')},"replaced":${slot('replaced')}}` },
  conflict: conflictAnswer(),
};

/** Reads a keyed import's body through for its fingerprint alone (its key has an answer already), the body limit enforced. */
export async function drainBody(source: AsyncIterable<Buffer>, limit: number, update: (chunk: Buffer) => void): Promise<void> {
  let bytes = 0;
  for await (const chunk of source) {
    bytes += chunk.length;
    if (bytes > limit) throw new ImportTooLargeError(limit);
    update(chunk);
  }
}
