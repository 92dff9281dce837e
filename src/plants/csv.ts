import { ImportRowError, rowTooLong } from './import-errors.js';

/**
 * CSV as exports write it (export.ts), read back for imports: RFC 4180 records arriving in pieces, each
 * yielded with the line it starts on, without holding the whole input. Fields are quoted or not; in a
 * quoted field a doubled quote is a quote, and commas, CR and LF are text. Records end with CRLF or LF; a
 * blank line is skipped but counted; a UTF-8 byte order mark (spreadsheets write one) is skipped. A
 * record longer than `maxRowBytes` is refused as soon as it is.
 */

export interface CsvRecord {
  /** The line the record starts on, 1-based (a quoted field may hold line breaks). */
  line: number;
  fields: string[];
}

type State = 'fieldStart' | 'unquoted' | 'quoted' | 'quote' | 'cr';

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

export async function* csvRecords(source: AsyncIterable<string>, maxRowBytes: number): AsyncGenerator<CsvRecord> {
  let state: State = 'fieldStart';
  let line = 1;
  let recordLine = 1;
  let fields: string[] = [];
  /** The current field's text from earlier pieces (or before a doubled quote). */
  let field = '';
  /** UTF-8 bytes of the current record in earlier pieces. */
  let recordBytes = 0;
  let first = true;
  const fail = (problem: string): never => {
    throw new ImportRowError(`line ${line}: ${problem}`);
  };

  for await (let piece of source) {
    if (first && piece.length > 0) {
      if (piece.charCodeAt(0) === 0xfeff) piece = piece.slice(1);
      first = false;
    }
    /** Where the current record's text (and the current field's) began in this piece. */
    let recordStart = 0;
    let fieldStart = 0;
    /** Fails a record longer than the limit, up to `end`; `cr`: its text ends in the CR of a CRLF, which is the line end's, not the row's. */
    const measure = (end: number, cr: boolean) => {
      // At most 3 UTF-8 bytes per UTF-16 unit: most records need no counting.
      const length = end - recordStart;
      if (
        (recordBytes > 0 || length * 3 > maxRowBytes) &&
        recordBytes + Buffer.byteLength(piece.slice(recordStart, end)) - (cr ? 1 : 0) > maxRowBytes
      )
        throw rowTooLong(`line ${recordLine}`, maxRowBytes);
    };
    const push = (end: number) => {
      fields.push(state === 'unquoted' ? field + piece.slice(fieldStart, end) : field);
      field = '';
    };
    const endRecord = (at: number, cr = false): CsvRecord | undefined => {
      measure(at, cr);
      const record = fields.length === 1 && fields[0] === '' ? undefined : { line: recordLine, fields };
      fields = [];
      recordBytes = 0;
      recordStart = at + 1;
      line++;
      recordLine = line;
      state = 'fieldStart';
      return record;
    };

    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      if (state === 'quoted') {
        // Everything is text up to the next quote, commas and line breaks included.
        if (c === QUOTE) {
          field += piece.slice(fieldStart, i);
          state = 'quote';
        } else if (c === LF) {
          line++;
        }
        continue;
      }
      if (state === 'cr') {
        if (c !== LF) fail('a carriage return outside quotes that does not end the line');
        const record = endRecord(i, true);
        if (record) yield record;
        continue;
      }
      if (state === 'quote' && c === QUOTE) {
        // A doubled quote: one quote of text, and the quoted field goes on.
        field += '"';
        state = 'quoted';
        fieldStart = i + 1;
        continue;
      }
      if (c === COMMA || c === LF || c === CR) {
        // The field ends (unquoted, empty, or after its closing quote); a line end ends the record too.
        push(i);
        if (c === COMMA) state = 'fieldStart';
        else if (c === CR) state = 'cr';
        else {
          const record = endRecord(i);
          if (record) yield record;
        }
        continue;
      }
      if (state === 'quote') fail('text after the closing quote of a field (a quote inside a quoted field is written twice)');
      if (c === QUOTE) {
        if (state === 'unquoted') fail('a quote inside a field that does not start with one (quote the whole field, and double its quotes)');
        state = 'quoted';
        fieldStart = i + 1;
      } else if (state === 'fieldStart') {
        state = 'unquoted';
        fieldStart = i;
      }
    }
    // The piece ends inside a record: keep what the current field has so far, and count the record's bytes.
    if (state === 'unquoted' || state === 'quoted') {
      field += piece.slice(fieldStart);
    }
    measure(piece.length, state === 'cr');
    recordBytes += Buffer.byteLength(piece.slice(recordStart));
  }

  // The state as the last piece left it (TypeScript cannot see the closures above change it).
  const last = state as State;
  if (last === 'quoted') throw new ImportRowError(`line ${recordLine}: a quoted field is not closed: the input ended inside it`);
  if (last === 'unquoted' || last === 'quote') fields.push(field);
  else if (last === 'fieldStart' && fields.length > 0) fields.push('');
  if (fields.length > 0 && !(fields.length === 1 && fields[0] === '')) yield { line: recordLine, fields };
}
