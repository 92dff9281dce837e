import type { FastifyReply } from 'fastify';
import { etag } from '../http/conditional.js';
import { HttpError } from '../http/errors.js';
import { addWarning, type IgnoredFields } from '../http/unknown-fields.js';
import { toPlantId, type PlantId } from '../model/plant-id.js';
import type { RequestWrite } from '../http/writes.js';
import { ImportConflictError, type IfMatch, type IfNoneMatch } from '../store/store.js';
import type { Outcomes } from '../store/writes.js';

/**
 * What the plant routes answer: their refusals, and the answers of the POSTs to what their write did.
 * A POST answers from its write's outcome with one function, without an Idempotency-Key, with one the
 * first time and on every replay of it (http/writes.ts), so that all three are the same bytes.
 */

export function notFound(id: PlantId): HttpError {
  return new HttpError('not_found', `no plant with id ${id}`);
}

export function exists(id: PlantId): HttpError {
  return new HttpError('plant_exists', `a plant with id ${id} already exists (If-None-Match: *)`);
}

/** The 412 of a write whose If-Match (`condition`) or If-None-Match (`unless`, its versions) did not hold. */
export function preconditionFailed(id: PlantId, condition: IfMatch | undefined, unless?: IfNoneMatch): HttpError {
  if (unless !== undefined) {
    return new HttpError(
      'precondition_failed',
      condition === undefined
        ? `the plant with id ${id} is at a version named by If-None-Match: it has not changed since`
        : `the plant with id ${id} is not at a version named by If-Match, or is at one named by If-None-Match`,
    );
  }
  return new HttpError(
    'precondition_failed',
    condition === '*'
      ? `no plant with id ${id} (If-Match: *)`
      : `the plant with id ${id} is not at a version named by If-Match: it changed, or is gone`,
  );
}

/** The 409 of a create-only import that found an id stored already (the outcome's id, as decimal text). */
function importConflict(id: string): HttpError {
  return new HttpError('import_conflict', new ImportConflictError(toPlantId(id)).message);
}

/** The warning of a POST that replaced a plant rather than creating it (the CLI's --url create tells the two apart by it). */
export function replacedWarning(id: PlantId): string {
  return `replaced the stored plant ${id}`;
}

/**
 * POST /plants: 200 with the plant's name and tag and its new ETag, or the 412 the put found
 * (If-None-Match: * of a plant that exists; If-Match not holding).
 */
export function answerPut(reply: FastifyReply, put: Outcomes['put'], { input }: RequestWrite<'put'>): FastifyReply {
  const { plant } = input;
  if (put.outcome === 'exists') throw exists(plant.id);
  if (put.outcome === 'precondition-failed') throw preconditionFailed(plant.id, input.ifMatch, input.ifNoneMatch);
  // Rule 1 keeps the 200 of a POST that replaced a plant; the answer says so (If-None-Match: * only creates).
  if (put.outcome === 'replaced') addWarning(reply, replacedWarning(plant.id));
  // The specification's Plant has no id: its serializer writes the name and tag alone.
  return reply.code(200).header('etag', etag(put.version)).send(plant);
}

/**
 * POST /plants/import: 200 with the counts, with a Warning per unknown field of its rows (`ignored`: each
 * field and the rows it was in, counted as the rows were read), or the 409 of a create-only import that
 * found an id stored already.
 */
export function answerImport(reply: FastifyReply, imported: Outcomes['import'], ignored: IgnoredFields): FastifyReply {
  if ('conflict' in imported) throw importConflict(imported.conflict);
  for (const text of ignored.warnings()) addWarning(reply, text);
  return reply.send(imported);
}
