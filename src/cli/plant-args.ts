import { parseInt64, type PlantId } from '../model/plant-id.js';
import { TAG_MAX } from '../model/plant.js';
import type { ImportFormat } from '../plants/import.js';
import { LIST_TAGS_MAX, SEARCH_MAX } from '../plants/schema.js';
import type { PlantSort } from '../store/store.js';
import { UsageError, type Given } from './command.js';
import { defaultListFormat, type ListFormat } from './plant-output.js';

/**
 * What the plant commands were asked, checked once and the same for both ways of working (on the store,
 * through a service): plants-store.ts and plants-http.ts each take these.
 */

/** A plant id as the commands take it: a plain decimal int64, exact (a bigint beyond 2^53). */
export function plantId(text: string, what: string): PlantId {
  const id = parseInt64(text);
  if (id === undefined) throw new UsageError(`${what} must be an integer from -9223372036854775808 to 9223372036854775807, got "${text}"`);
  return id;
}

export interface NewPlantInput {
  id: PlantId;
  name: string;
  tag?: string;
}

export function newPlant(given: Given): NewPlantInput {
  const id = plantId(given.string('id')!, '--id');
  const name = given.string('name')!;
  const tag = given.string('tag');
  return tag === undefined ? { id, name } : { id, name, tag };
}

/** What a list or an export selects, and in which order. */
export interface Selection {
  q: string | undefined;
  tags: string[] | undefined;
  sort: PlantSort;
}

/**
 * The filters, within the bounds GET /plants sets (plants/schema.ts), checked here for both ways of working:
 * on the store they went unchecked, and the same command answered otherwise through a service (a 400).
 */
export function selection(given: Given): Selection {
  const q = given.string('q');
  if (q === '') throw new UsageError('--q must not be empty');
  if (q !== undefined && [...q].length > SEARCH_MAX) throw new UsageError(`--q must be at most ${SEARCH_MAX} characters, got ${[...q].length}`);
  const tags = given.strings('tag');
  if (tags !== undefined && tags.length > LIST_TAGS_MAX)
    throw new UsageError(`--tag may be given at most ${LIST_TAGS_MAX} times, got ${tags.length}`);
  const long = tags?.find((tag) => [...tag].length > TAG_MAX);
  if (long !== undefined) throw new UsageError(`--tag must be at most ${TAG_MAX} characters, got ${[...long].length}`);
  return { q, tags, sort: (given.string('sort') ?? 'id') as PlantSort };
}

export interface ListInput extends Selection {
  /** At most this many plants; all of them when undefined. */
  limit: number | undefined;
  format: ListFormat;
}

export function listInput(given: Given): ListInput {
  const text = given.string('limit');
  const limit = text === undefined ? undefined : /^\d+$/.test(text) ? Number(text) : NaN;
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1))
    throw new UsageError(`--limit must be a whole number, 1 or more, got "${text}"`);
  return { ...selection(given), limit, format: (given.string('format') as ListFormat | undefined) ?? defaultListFormat() };
}

export interface ExportInput extends Selection {
  format: 'ndjson' | 'csv';
}

export function exportInput(given: Given): ExportInput {
  return { ...selection(given), format: (given.string('format') ?? 'ndjson') as 'ndjson' | 'csv' };
}

export interface ImportInput {
  file: string;
  /** As --format says it; read from the input when undefined. */
  format: ImportFormat | undefined;
  createOnly: boolean;
  /** A row's fields NewPlant does not name are ignored, and said (--lenient), rather than refused. */
  lenient: boolean;
}

export function importInput(given: Given): ImportInput {
  return {
    file: given.args[0]!,
    format: given.string('format') as ImportFormat | undefined,
    createOnly: given.string('mode') === 'create-only',
    lenient: given.flag('lenient'),
  };
}

/** An import's progress line goes out at most this often. */
export const PROGRESS_MS = 1000;
