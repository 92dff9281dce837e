import { Readable } from 'node:stream';
import { quality } from '../http/accept.js';
import type { PlantExport } from '../store/store.js';
import type { StoredPlant } from '../model/plant.js';
import { csvCell } from './csv-cells.js';
import { foldCase } from '../model/fold.js';

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

/** An export whose reader takes nothing for `timeoutMs` is ended: `onIdle` is told first. */
export interface IdleLimit {
  timeoutMs: number;
  onIdle: () => void;
}

/** EXPORT_IDLE_TIMEOUT_MS for an export answered over HTTP: the end is logged as a warning. */
export function idleLimit(timeoutMs: number, log: { warn(details: object, message: string): void }): IdleLimit {
  return {
    timeoutMs,
    onIdle: () =>
      log.warn(
        { idleMs: timeoutMs },
        `export ended: the client took nothing for ${timeoutMs} ms (EXPORT_IDLE_TIMEOUT_MS); its snapshot, connection and export slot are given back`,
      ),
  };
}

/**
 * The export as a stream, a chunk of plants at a time as the reader takes them. Destroying the stream
 * (the client went away) stops the reads and releases the snapshot. With `idle`, a reader that takes
 * nothing for `idle.timeoutMs` ends it so too: an export holds a read transaction (which keeps SQLite's
 * write-ahead log from being reset past it) or a pool connection (PostgreSQL), and one of the few export
 * slots, for as long as it lasts.
 */
export function exportStream(snapshot: PlantExport, format: 'ndjson' | 'csv', idle?: IdleLimit): Readable {
  const source = lines(snapshot, format);
  const stream = Readable.from(idle ? endWhenIdle(source, idle, () => stream) : source, { objectMode: false });
  // A stream destroyed before its first read never starts the generator: release the snapshot anyway.
  stream.once('close', () => void snapshot.close());
  return stream;
}

/**
 * Idleness is measured where the reader takes the export: the stream asks for the next chunk only when
 * its buffer has room, that is when its consumer (the answer, piped into the socket) has taken what it
 * held. A chunk handed over and not followed by a request for the next within the time-out ends the
 * export. A slow store is not idleness: no clock runs while the next chunk is being read.
 * (The stream's 'pause' and 'resume' events are no such measure: on Node 24 an export piped into a stalled
 * answer was left paused with 'resume' the last event it emitted, and was never ended.)
 */
async function* endWhenIdle(source: AsyncGenerator<string>, { timeoutMs, onIdle }: IdleLimit, stream: () => Readable): AsyncGenerator<string> {
  let timer: NodeJS.Timeout | undefined;
  const end = () => {
    if (stream().destroyed) return;
    onIdle();
    stream().destroy();
  };
  try {
    for await (const chunk of source) {
      timer = setTimeout(end, timeoutMs).unref();
      yield chunk;
      clearTimeout(timer);
    }
  } finally {
    clearTimeout(timer);
  }
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

/**
 * Whether what `q` selects can be counted without reading every plant: a q of 3 characters or more
 * (folded) is counted through the trigram index, but a shorter one has no trigram to look up, so its
 * count would read every name; it is not made, and Prefer: count=exact is then not applied (RFC 7240
 * lets a server leave a preference aside: no X-Total-Count, no Preference-Applied).
 */
export function countable(q: string | undefined): boolean {
  return q === undefined || [...foldCase(q)].length >= 3;
}
