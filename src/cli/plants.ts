import { once } from 'node:events';
import { exportStream } from '../plants/export.js';
import { ImportRowError, ImportTooLargeError } from '../plants/import-errors.js';
import { IMPORT_FORMATS, importPlants, type ImportFormat } from '../plants/import.js';
import { PLANT_SORTS, type PlantSort } from '../store/store.js';
import { count } from '../words.js';
import { UsageError, type Command } from './command.js';
import { printJson, withStore } from './common.js';
import { openSource, sniff } from './import-source.js';

/** The progress line goes out at most this often. */
const PROGRESS_MS = 1000;

/** `plant-store plants import|export`: the same code as POST /plants/import and GET /plants exports. */
export const plantsCommand: Command = {
  name: 'plants',
  summary: 'Plants in bulk: import a whole catalogue, all or nothing, or export it, as the API does.',
  usesStore: true,
  actions: {
    import: {
      summary: 'import plants, all or nothing; prints {"created","replaced"}',
      details:
        'NDJSON (one NewPlant per line), a JSON array of NewPlants, or CSV as exports write it (header id,name,tag).\n' +
        'The format is read from the input unless --format says it: "[" starts a JSON array, "{" NDJSON, anything else CSV.\n' +
        'Every row is checked by the same rules as POST /plants; the first bad one stops the import, naming its line, and nothing is stored.',
      args: [{ name: 'FILE|-', required: true, help: 'the file to read, or - for standard input' }],
      options: {
        format: { type: 'string', value: 'FORMAT', choices: IMPORT_FORMATS, help: 'ndjson, json or csv (default: read from the input)' },
        mode: {
          type: 'string',
          value: 'MODE',
          choices: ['replace', 'create-only'],
          help: 'replace (the default): plants that exist are replaced; create-only: nothing is stored if any exists',
        },
      },
      async run(given) {
        const file = given.args[0]!;
        const stated = given.string('format') as ImportFormat | undefined;
        // Open the file first: a missing one is one line, and no store is opened for nothing.
        const source = await openSource(file);
        const { format, bytes } = stated === undefined ? await sniff(source) : { format: stated, bytes: source };
        let shown = Date.now();
        const result = await withStore((store, config) =>
          importPlants(store.plants, bytes, {
            format,
            createOnly: given.string('mode') === 'create-only',
            limit: config.importBodyLimit,
            maxRowBytes: config.importMaxRowBytes,
            progress: (rows) => {
              if (Date.now() - shown < PROGRESS_MS) return;
              shown = Date.now();
              process.stderr.write(`plant-store: ${count(rows, 'row')} read…\n`);
            },
          }),
        ).catch((error: unknown) => {
          // A bad row is the input's fault: say where, as HTTP does (exit 1, nothing stored).
          if (error instanceof ImportRowError || error instanceof ImportTooLargeError) throw new Error(`nothing imported: ${error.message}`);
          throw error;
        });
        const total = count(result.created + result.replaced, 'plant');
        process.stderr.write(`imported ${total} from ${format}: ${result.created} created, ${result.replaced} replaced\n`);
        printJson(result);
      },
    },
    export: {
      summary: 'every plant the filters select, in id order unless --sort says another, to stdout',
      options: {
        format: { type: 'string', value: 'FORMAT', choices: ['ndjson', 'csv'], help: 'ndjson (the default) or csv' },
        q: { type: 'string', value: 'TEXT', help: 'only the plants whose name contains TEXT, in any case (as GET /plants?q=)' },
        tag: { type: 'string', value: 'TAG', multiple: true, help: 'only the plants with this tag; repeated, with any of them' },
        sort: { type: 'string', value: 'ORDER', choices: PLANT_SORTS, help: 'id (the default), -id, name or -name; ties on name by id' },
      },
      async run(given) {
        const format = (given.string('format') ?? 'ndjson') as 'ndjson' | 'csv';
        const q = given.string('q');
        if (q === '') throw new UsageError('--q must not be empty');
        const sort = (given.string('sort') ?? 'id') as PlantSort;
        await withStore(async (store) => {
          const stream = exportStream(await store.plants.export({ q, tags: given.strings('tag'), sort }), format);
          for await (const chunk of stream) {
            if (!process.stdout.write(chunk as string)) await once(process.stdout, 'drain');
          }
        });
      },
    },
  },
};
