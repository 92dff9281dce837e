import { parseInt64, type PlantId } from '../model/plant-id.js';
import { ImportRowError } from './import-errors.js';

/**
 * CSV cells both ways: exports write them (export.ts), imports read them back (import.ts), so that a
 * round trip gives the same plants (but an empty tag, which CSV cannot tell from none).
 */

/**
 * A cell a spreadsheet would run as a formula starts with =, +, -, @, tab or CR; exports prefix it with
 * `'`, which spreadsheets show as text (OWASP's advice against CSV injection). So that an import can
 * undo exactly that, a text that already starts with quotes before such a character gets one more.
 */
const DISARMED = /^'*[=+\-@\t\r]/;
const PREFIXED = /^'+[=+\-@\t\r]/;

/** A CSV cell (RFC 4180): disarmed, then quoted when it holds a comma, a quote, CR or LF, quotes doubled. */
export function csvCell(text: string): string {
  const safe = DISARMED.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** A cell's text as it was before csvCell disarmed it. */
export function fromCsvCell(cell: string): string {
  return PREFIXED.test(cell) ? cell.slice(1) : cell;
}

/** Where a CSV's columns are, by its header: id and name, and tag if it has one, in any order. */
export function csvColumns(header: string[], line: number): { id: number; name: number; tag: number | undefined } {
  const names = header.map((name) => name.trim().toLowerCase());
  const bad = names.find((name, i) => !['id', 'name', 'tag'].includes(name) || names.indexOf(name) !== i);
  if (bad !== undefined || !names.includes('id') || !names.includes('name')) {
    throw new ImportRowError(
      `line ${line}: the header must name the columns id, name and tag (tag may be left out), as exports write it; got "${header.join(',').slice(0, 100)}"`,
    );
  }
  const tag = names.indexOf('tag');
  return { id: names.indexOf('id'), name: names.indexOf('name'), tag: tag === -1 ? undefined : tag };
}

/**
 * An id cell as the row's id: plain decimal digits within int64, exactly. Anything else is left for the
 * row's validation to name: digits beyond int64 as a bigint ("must be an integer from … to …"), other
 * text as it is ("must be an integer").
 */
export function csvId(cell: string): PlantId | string {
  const text = cell.trim();
  // Only plain digits beyond int64 become a bigint: `-0` and `007` (in range once read) stay text, refused as in a path.
  return parseInt64(text) ?? (/^-?[1-9]\d*$/.test(text) ? BigInt(text) : cell);
}
