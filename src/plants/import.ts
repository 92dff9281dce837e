import type { ValidateFunction } from 'ajv';
import { parseJsonText } from '../http/json.js';
import { count } from '../words.js';
import { validatorCompiler } from '../http/validation.js';
import { describeRowProblems, optionalFields } from '../http/validation-messages.js';
import { IgnoredFields, unknownFields, unknownFieldsProblem } from '../http/unknown-fields.js';
import type { ImportResult, PlantImport, PlantStore } from '../store/store.js';
import type { StoredPlant } from '../model/plant.js';
import { ImportRowError, ImportTooLargeError, rowTooLong } from './import-errors.js';
import { csvColumns, csvId, fromCsvCell } from './csv-cells.js';
import { csvRecords } from './csv.js';
import { splitJsonArray } from './json-array.js';
import { NewPlant } from './schema.js';

/**
 * Bulk import: NewPlants from NDJSON (one per line), a JSON array or CSV as exports write it, streamed,
 * every row validated by the same schema as POST /plants, staged by the store in chunks, and committed
 * all at once or not at all. The same code serves POST /plants/import and `plant-store plants import`.
 */

export const IMPORT_FORMATS = ['ndjson', 'json', 'csv'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** Rows go to the store this many at a time (and the rest of the piece that filled them): memory stays flat however large the import. */
const CHUNK = 1000;

/** Compiled when first needed: the CLI loads this module for every command, and most never import. */
let compiled: ValidateFunction | undefined;
const validator = () =>
  (compiled ??= validatorCompiler({ schema: NewPlant, method: 'POST', url: '/plants/import', httpPart: 'body' }) as ValidateFunction);

/** The fields a row may have: NewPlant's; and those it need not have, which a near-miss may name ("tga": tag). */
const FIELDS: ReadonlySet<string> = new Set(Object.keys(NewPlant.properties));
const OPTIONAL = optionalFields(NewPlant);

/**
 * What an import does with a JSON row's fields NewPlant does not name: refuse the row (Prefer:
 * handling=strict: 400 naming it, nothing stored), or ignore them, counting the rows each was in (the
 * answer's Warning headers, the CLI's message) within a fixed budget (IgnoredFields). A CSV's header
 * names its columns, and names only these.
 */
export interface UnknownFields {
  refuse: boolean;
  /** Filled as rows are read: the fields ignored, and in how many rows. */
  ignored: IgnoredFields;
}

/** An import's handling of unknown fields: refused, or ignored and counted (their near-misses named by NewPlant's fields). */
export function importUnknownFields(refuse: boolean): UnknownFields {
  return { refuse, ignored: new IgnoredFields(OPTIONAL) };
}

/** A row's value as a plant, once the same rules as POST /plants have passed it; `where` names it in an error. */
type RowCheck = (value: unknown, where: string) => StoredPlant;

function rowCheck(unknown: UnknownFields | undefined): RowCheck {
  return (value, where) => {
    const validate = validator();
    if (!validate(value)) throw new ImportRowError(describeRowProblems(where, validate.errors));
    if (unknown !== undefined) {
      const extra = unknownFields(value, FIELDS);
      if (extra.length > 0 && unknown.refuse) {
        throw new ImportRowError(`${where}: ${unknownFieldsProblem('the row', extra, OPTIONAL, value as object)}`, 'unknown_field');
      }
      if (extra.length > 0) unknown.ignored.add(extra);
    }
    const { id, name, tag } = value as { id: StoredPlant['id']; name: string; tag?: string };
    return tag === undefined ? { id, name } : { id, name, tag };
  };
}

/** One row, parsed exactly (int64 ids) and checked. */
function toPlant(text: string, where: string, check: RowCheck): StoredPlant {
  let value: unknown;
  try {
    value = parseJsonText(text);
  } catch (error) {
    throw new ImportRowError(`${where}: ${(error as Error).message}`);
  }
  return check(value, where);
}

/** Text from bytes, strictly UTF-8 across chunk boundaries, the body limit enforced; each chunk told to `onBytes` as it comes. */
async function* text(source: AsyncIterable<Buffer | string>, limit: number, onBytes?: (chunk: Buffer) => void): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let bytes = 0;
  for await (const chunk of source) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    bytes += buffer.length;
    if (bytes > limit) throw new ImportTooLargeError(limit);
    onBytes?.(buffer);
    try {
      yield decoder.decode(buffer, { stream: true });
    } catch {
      throw new ImportRowError('the body is not valid UTF-8');
    }
  }
  try {
    yield decoder.decode();
  } catch {
    throw new ImportRowError('the body is not valid UTF-8');
  }
}

/** 1 when a line's text (its pieces held so far, then `tail`) ends in a CR, the first half of a CRLF; else 0. */
function endsInCr(pending: readonly string[], tail: string): number {
  const last = tail !== '' ? tail : (pending[pending.length - 1] ?? '');
  return last.charCodeAt(last.length - 1) === 0x0d ? 1 : 0;
}

/**
 * NDJSON rows: one JSON value per line (LF or CRLF); blank lines are skipped but counted. Each arriving
 * piece is searched for line ends once, from where the search stopped: a long line costs time in
 * proportion to its length, never to its length squared. A line longer than `maxRowBytes` is refused.
 * A piece's rows come out together, in one array: a row at a time through two async generators, their
 * promises were 40% of what the main thread allocated per row (1.2 KB, now 0.7).
 */
async function* ndjsonRows(source: AsyncIterable<string>, maxRowBytes: number, check: RowCheck): AsyncGenerator<StoredPlant[]> {
  // The pieces of the line not yet ended, and their size in UTF-8 bytes.
  let pending: string[] = [];
  let pendingBytes = 0;
  let line = 0;
  for await (const piece of source) {
    const rows: StoredPlant[] = [];
    let start = 0;
    let end: number;
    while ((end = piece.indexOf('\n', start)) !== -1) {
      line++;
      const tail = piece.slice(start, end);
      // A string has at most 3 UTF-8 bytes per UTF-16 unit: most lines need no counting. The CR of a CRLF
      // is the line end's, not the row's (a row of the limit passed with LF and not with CRLF).
      if ((pendingBytes > 0 || tail.length * 3 > maxRowBytes) && pendingBytes + Buffer.byteLength(tail) - endsInCr(pending, tail) > maxRowBytes)
        throw rowTooLong(`line ${line}`, maxRowBytes);
      const row = pending.length === 0 ? tail : pending.join('') + tail;
      pending = [];
      pendingBytes = 0;
      start = end + 1;
      if (row.trim() !== '') rows.push(toPlant(row, `line ${line}`, check));
    }
    if (start < piece.length) {
      const rest = start === 0 ? piece : piece.slice(start);
      pendingBytes += Buffer.byteLength(rest);
      if (pendingBytes - endsInCr([], rest) > maxRowBytes) throw rowTooLong(`line ${line + 1}`, maxRowBytes);
      pending.push(rest);
    }
    if (rows.length > 0) yield rows;
  }
  const last = pending.join('');
  if (last.trim() !== '') yield [toPlant(last, `line ${line + 1}`, check)];
}

async function* jsonArrayRows(source: AsyncIterable<string>, maxRowBytes: number, check: RowCheck): AsyncGenerator<StoredPlant[]> {
  for await (const { index, text: element } of splitJsonArray(source, maxRowBytes)) yield [toPlant(element, `element ${index}`, check)];
}

/** Each format's rows, in arrays as they come (NDJSON: a piece's; the others: one row each). */
const ROWS: Record<ImportFormat, (source: AsyncIterable<string>, maxRowBytes: number, check: RowCheck) => AsyncGenerator<StoredPlant[]>> = {
  ndjson: ndjsonRows,
  json: jsonArrayRows,
  csv: csvRows,
};

/** CSV with the header `id,name,tag` (the columns in any order, tag optional), as exports write it. */
async function* csvRows(source: AsyncIterable<string>, maxRowBytes: number, check: RowCheck): AsyncGenerator<StoredPlant[]> {
  let columns: { id: number; name: number; tag: number | undefined } | undefined;
  let width = 0;
  for await (const { line, fields } of csvRecords(source, maxRowBytes)) {
    if (columns === undefined) {
      columns = csvColumns(fields, line);
      width = fields.length;
      continue;
    }
    if (fields.length !== width) {
      throw new ImportRowError(`line ${line}: has ${count(fields.length, 'field')}, where the header has ${width}`);
    }
    const tag = columns.tag === undefined ? '' : fromCsvCell(fields[columns.tag]!);
    const row = { id: csvId(fields[columns.id]!), name: fromCsvCell(fields[columns.name]!), ...(tag === '' ? {} : { tag }) };
    yield [check(row, `line ${line}`)];
  }
}

/**
 * The rows of a body, CHUNK or a little more at a time (the rest of the piece that filled one). Each
 * piece's array is emptied as its rows move to the chunk: the generator that made it holds it while the
 * chunk is staged (see stageImport).
 */
async function* chunks(batches: AsyncIterable<StoredPlant[]>): AsyncGenerator<StoredPlant[]> {
  let chunk: StoredPlant[] = [];
  for await (const rows of batches) {
    for (const row of rows) chunk.push(row);
    rows.length = 0;
    if (chunk.length >= CHUNK) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

export interface ImportOptions {
  format: ImportFormat;
  createOnly: boolean;
  /** Bytes at most (IMPORT_BODY_LIMIT). */
  limit: number;
  /** Bytes of one row (a line, an array element) at most (IMPORT_MAX_ROW_BYTES). */
  maxRowBytes: number;
  /** Told the rows staged so far, after each chunk (the CLI's progress line). */
  progress?: (rows: number) => void;
  /** Told each piece of the body as it arrives, before it is parsed (a keyed import's fingerprint). */
  onBytes?: (chunk: Buffer) => void;
  /** What to do with the rows' fields NewPlant does not name (none: ignored without a count). */
  unknownFields?: UnknownFields;
}

/**
 * Imports the rows of `source` into the store: all or nothing. The first bad row stops it with an
 * ImportRowError; a create-only import that names an existing id with ImportConflictError (from the
 * store); nothing is stored in either case.
 */
export function importPlants(plants: PlantStore, source: AsyncIterable<Buffer | string>, options: ImportOptions): Promise<ImportResult> {
  return stageImport(plants, source, options, (session) => session.commit({ createOnly: options.createOnly }));
}

/**
 * Stages every row of `source`, then `commit`s the import (PlantImport.commit; or its commit under an
 * Idempotency-Key: http/writes.ts); whatever happens, nothing staged is left behind.
 */
export async function stageImport<T>(
  plants: PlantStore,
  source: AsyncIterable<Buffer | string>,
  options: ImportOptions,
  commit: (session: PlantImport) => Promise<T>,
): Promise<T> {
  const session = await plants.startImport();
  try {
    const decoded = text(source, options.limit, options.onBytes);
    const rows = ROWS[options.format](decoded, options.maxRowBytes, rowCheck(options.unknownFields));
    let staged = 0;
    for await (const chunk of chunks(rows)) {
      staged += chunk.length;
      // Handed over (splice empties the chunk), not held here while the store stages them: V8 collects the
      // young generation when the thread is idle, which is while the store's round trip runs, and rows held
      // then were promoted to the old generation in half the runs (5% of all the import allocated), which
      // grew by up to 60 MB before a full collection: a 200 MB import's peak RSS was 172-219 MB.
      await session.add(chunk.splice(0));
      options.progress?.(staged);
    }
    return await commit(session);
  } finally {
    await session.abort();
  }
}

/**
 * Reads the rows of `source` through as an import would, every row checked, and stores nothing: the body
 * of a request whose Idempotency-Key has an outcome already, read for its fingerprint (`onBytes`) and for
 * its rows' unknown fields (counted into `unknownFields` as the first time), the body limit enforced. A row
 * refused means a body unlike the first one (whose rows all passed): the rest is read for the fingerprint
 * all the same, which then differs (422).
 */
export async function readRows(source: AsyncIterable<Buffer | string>, options: ImportOptions): Promise<void> {
  const chunks = source[Symbol.asyncIterator]();
  // The parser stopping early (return) leaves the rest of the body to read here.
  const kept = {
    [Symbol.asyncIterator]: () => ({ next: () => chunks.next(), return: () => Promise.resolve({ done: true as const, value: undefined }) }),
  };
  let bytes = 0;
  const onBytes = (chunk: Buffer) => {
    bytes += chunk.length;
    options.onBytes?.(chunk);
  };
  try {
    for await (const _rows of ROWS[options.format](text(kept, options.limit, onBytes), options.maxRowBytes, rowCheck(options.unknownFields)));
  } catch (error) {
    if (!(error instanceof ImportRowError)) throw error;
    for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) {
      const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      bytes += chunk.length;
      if (bytes > options.limit) throw new ImportTooLargeError(options.limit);
      options.onBytes?.(chunk);
    }
  }
}
