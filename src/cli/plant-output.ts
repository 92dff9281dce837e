import { once } from 'node:events';
import type { StoredPlant } from '../model/plant.js';
import { ndjsonLine } from '../plants/export.js';
import { columns, padColumns } from './columns.js';
import { print, shown, type Sink } from './output.js';

/**
 * Plants as `plants list` prints them, the same from the store and from a service: NDJSON (one plant per
 * line, as exports write it, ids exact) for a program, or a table for a person. A list arrives a batch at
 * a time (a page, an export's chunk) and is printed as it comes, in flat memory.
 */

export const LIST_FORMATS = ['ndjson', 'table'] as const;
export type ListFormat = (typeof LIST_FORMATS)[number];

/** The format when none is asked for: a table on a terminal, NDJSON to a pipe or a file. */
export function defaultListFormat(sink: Sink = process.stdout): ListFormat {
  return sink.isTTY ? 'table' : 'ndjson';
}

const id = (plant: StoredPlant) => String(plant.id);

export interface PlantPrinter {
  add(plants: readonly StoredPlant[]): Promise<void>;
  /** Ends the list (a table with no plant still has its heading). */
  end(): void;
}

/**
 * A printer of plants in `format`. A table's columns take the widths of the first batch (up to a page of a
 * thousand plants), so that it can be printed as it comes: a later, longer cell only pushes its own row.
 */
export function plantPrinter(format: ListFormat, sink: Sink = process.stdout): PlantPrinter {
  let widths: [number, number] | undefined;
  const write = async (text: string) => {
    if (!print(text, sink) && 'once' in sink) await once(sink as NodeJS.WritableStream, 'drain');
  };
  const row = (cells: [string, string, string]) =>
    `${padColumns(cells[0], widths![0])}  ${padColumns(cells[1], widths![1])}  ${cells[2]}`.trimEnd() + '\n';
  const heading = (plants: ReadonlyArray<[string, string, string]>) => {
    widths = [Math.max(2, ...plants.map((p) => p[0].length)), Math.max(4, ...plants.map((p) => columns(p[1])))];
    return row(['ID', 'NAME', 'TAG']);
  };
  return {
    async add(plants) {
      if (plants.length === 0) return;
      if (format === 'ndjson') return write(plants.map(ndjsonLine).join(''));
      // Cells escaped before they are measured: on a terminal a control character takes four columns, not one.
      const cells = plants.map((p): [string, string, string] => [id(p), shown(p.name, sink), shown(p.tag ?? '', sink)]);
      const text = (widths === undefined ? heading(cells) : '') + cells.map(row).join('');
      // Escaped already: written as it is (print would leave it so too).
      if (!sink.write(text) && 'once' in sink) await once(sink as NodeJS.WritableStream, 'drain');
    },
    end() {
      if (format === 'table' && widths === undefined) sink.write(heading([]));
    },
  };
}
