import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { exportStream } from '../plants/export.js';
import { ImportRowError, ImportTooLargeError } from '../plants/import-errors.js';
import { importPlants, type ImportFormat } from '../plants/import.js';
import { PLANT_SORTS, type PlantSort } from '../store/store.js';
import { printJson, usage, UsageError, withStore } from './common.js';

const isPlantSort = (text: string): text is PlantSort => (PLANT_SORTS as readonly string[]).includes(text);

export const PLANTS_USAGE = `  plants import FILE|- [--format ndjson|json] [--mode replace|create-only]
                                               import plants, all or nothing (NDJSON: one NewPlant per line;
                                               json: an array); prints {"created","replaced"}; - reads stdin
  plants export [--format ndjson|csv] [--q TEXT] [--tag TAG]... [--sort id|-id|name|-name]
                                               every plant the filters select (name containing TEXT, any
                                               of the tags), in that order (default id), to stdout`;

/** The progress line goes out at most this often. */
const PROGRESS_MS = 1000;

export async function plantsCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = usage(() =>
    parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        format: { type: 'string' },
        mode: { type: 'string' },
        q: { type: 'string' },
        tag: { type: 'string', multiple: true },
        sort: { type: 'string' },
      },
    }),
  );
  switch (action) {
    case 'import': {
      const file = positionals[0];
      if (!file) throw new UsageError('plants import needs a FILE, or - for standard input');
      const format = (values.format ?? (file.toLowerCase().endsWith('.json') ? 'json' : 'ndjson')) as ImportFormat;
      if (format !== 'ndjson' && format !== 'json') throw new UsageError('--format must be ndjson or json');
      const mode = values.mode ?? 'replace';
      if (mode !== 'replace' && mode !== 'create-only') throw new UsageError('--mode must be replace or create-only');
      const source = file === '-' ? process.stdin : createReadStream(file);
      let shown = 0;
      const result = await withStore((store, config) =>
        importPlants(store.plants, source, {
          format,
          createOnly: mode === 'create-only',
          limit: config.importBodyLimit,
          maxRowBytes: config.importMaxRowBytes,
          progress: (rows) => {
            if (Date.now() - shown < PROGRESS_MS) return;
            shown = Date.now();
            process.stderr.write(`plant-store: ${rows} rows read…\n`);
          },
        }),
      ).catch((error: unknown) => {
        // A bad row is the input's fault: say where, as HTTP does (exit 1, nothing stored).
        if (error instanceof ImportRowError || error instanceof ImportTooLargeError) throw new Error(`nothing imported: ${error.message}`);
        throw error;
      });
      return printJson(result);
    }
    case 'export': {
      const format = values.format ?? 'ndjson';
      if (format !== 'ndjson' && format !== 'csv') throw new UsageError('--format must be ndjson or csv');
      const sort = values.sort ?? 'id';
      if (!isPlantSort(sort)) throw new UsageError(`--sort must be one of ${PLANT_SORTS.join(', ')}`);
      if (values.q === '') throw new UsageError('--q must not be empty');
      await withStore(async (store) => {
        const stream = exportStream(await store.plants.export({ q: values.q, tags: values.tag, sort }), format);
        for await (const chunk of stream) {
          if (!process.stdout.write(chunk as string)) await once(process.stdout, 'drain');
        }
      });
      return;
    }
    default:
      throw new UsageError(`unknown plants command "${action ?? ''}"`);
  }
}
