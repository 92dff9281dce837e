import { Readable } from 'node:stream';
import { quality } from '../http/accept.js';
import type { PlantExport } from '../store/store.js';
import type { StoredPlant } from '../model/plant.js';
import { csvCell } from './csv-cells.js';

/**
 * Whole-catalogue exports: every plant the filters select (q, tags), in the order asked for, as NDJSON or
 * CSV, streamed from one snapshot with flat memory. The same code serves GET /plants and `plant-store plants export`.
 */

export const EXPORT_FORMATS = ['json', 'ndjson', 'csv'] as const;
export type ListFormat = (typeof EXPORT_FORMATS)[number];

export const MEDIA_TYPES: Record<ListFormat, string> = {
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  csv: 'text/csv',
};

const ID = (plant: StoredPlant) => (typeof plant.id === 'bigint' ? plant.id.toString() : String(plant.id));

/** One plant as an NDJSON line: `{"id":…,"name":…,"tag":…}`, the id a plain JSON integer, exact. */
export function ndjsonLine(plant: StoredPlant): string {
  return `{"id":${ID(plant)},"name":${JSON.stringify(plant.name)}${plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`}}\n`;
}

export const CSV_HEADER = 'id,name,tag\r\n';

/** One plant as a CSV record. An absent tag and an empty one are both an empty cell: NDJSON keeps the difference. */
export function csvLine(plant: StoredPlant): string {
  return `${ID(plant)},${csvCell(plant.name)},${plant.tag === undefined ? '' : csvCell(plant.tag)}\r\n`;
}

async function* lines(snapshot: PlantExport, format: 'ndjson' | 'csv'): AsyncGenerator<string> {
  if (format === 'csv') yield CSV_HEADER;
  const line = format === 'csv' ? csvLine : ndjsonLine;
  for await (const chunk of snapshot) {
    let text = '';
    for (const plant of chunk) text += line(plant);
    yield text;
  }
}

/**
 * The export as a stream, a chunk of plants at a time as the reader takes them. Destroying the stream
 * (the client went away) stops the reads and releases the snapshot.
 */
export function exportStream(snapshot: PlantExport, format: 'ndjson' | 'csv'): Readable {
  const stream = Readable.from(lines(snapshot, format), { objectMode: false });
  // A stream destroyed before its first read never starts the generator: release the snapshot anyway.
  stream.once('close', () => void snapshot.close());
  return stream;
}

/**
 * The answer's format: `format` when given, else the client's Accept (RFC 9110 §12.5.1: the supported
 * type with the highest q, JSON on a tie or when none is acceptable: the service answers JSON rather
 * than 406, as it always has).
 */
export function negotiate(accept: string | undefined, format: ListFormat | undefined): ListFormat {
  if (format !== undefined) return format;
  if (accept === undefined) return 'json';
  let best: ListFormat = 'json';
  let bestQ = 0;
  for (const candidate of EXPORT_FORMATS) {
    const q = quality(accept, MEDIA_TYPES[candidate]);
    if (q > bestQ) [best, bestQ] = [candidate, q];
  }
  return best;
}

/** Prefer: count=exact (RFC 7240), as PostgREST reads it. */
export function prefersExactCount(prefer: string | undefined): boolean {
  return prefer !== undefined && prefer.split(',').some((p) => p.trim().toLowerCase().replace(/\s+/g, '') === 'count=exact');
}
