import type { ValidateFunction } from 'ajv';
import { validatorCompiler } from '../http/validation.js';
import { joinProblems, validationProblems } from '../http/validation-messages.js';
import { exportStream } from '../plants/export.js';
import { ImportRowError, ImportTooLargeError } from '../plants/import-errors.js';
import { importPlants, importUnknownFields } from '../plants/import.js';
import { NewPlant } from '../plants/schema.js';
import type { PlantId } from '../model/plant-id.js';
import { count } from '../words.js';
import { withStore } from './common.js';
import { openSource, sniff } from './import-source.js';
import { printJson, printStream, say } from './output.js';
import { PROGRESS_MS, type ExportInput, type ImportInput, type ListInput, type NewPlantInput } from './plant-args.js';
import { plantPrinter } from './plant-output.js';

/**
 * The plant commands on the store DATABASE_URL names, through the same code as the HTTP routes (the
 * store, the import, the export) and by the same rules (a plant is checked by POST /plants' schema).
 * Each write names the store it went to.
 */

let compiled: ValidateFunction | undefined;
const validator = () => (compiled ??= validatorCompiler({ schema: NewPlant, method: 'POST', url: '/plants', httpPart: 'body' }) as ValidateFunction);

export async function create(plant: NewPlantInput): Promise<void> {
  const validate = validator();
  if (!validate(plant)) throw new Error(`nothing stored: ${joinProblems(validationProblems('the plant', validate.errors ?? []))}`);
  const { outcome, where } = await withStore(async (store, _config, where) => ({ outcome: (await store.plants.put(plant)).outcome, where }));
  say(`${outcome} plant ${plant.id} in ${where}`);
  printJson(plant);
}

export async function get(id: PlantId): Promise<void> {
  const { found, where } = await withStore(async (store, _config, where) => ({ found: await store.plants.get(id), where }));
  if (!found) throw new Error(`no plant with id ${id} in ${where}`);
  printJson(found.plant);
}

export async function remove(id: PlantId): Promise<void> {
  const { result, where } = await withStore(async (store, _config, where) => ({ result: await store.plants.delete(id), where }));
  if (result !== 'deleted') throw new Error(`no plant with id ${id} in ${where}`);
  say(`deleted plant ${id} from ${where}`);
}

/** Every plant the selection holds, from one snapshot, in its order; at most `limit`. */
export async function list({ q, tags, sort, limit, format }: ListInput): Promise<void> {
  const printer = plantPrinter(format);
  await withStore(async (store) => {
    const snapshot = await store.plants.export({ q, tags, sort });
    try {
      let left = limit ?? Infinity;
      for await (const chunk of snapshot) {
        const part = chunk.length > left ? chunk.slice(0, left) : chunk;
        await printer.add(part);
        left -= part.length;
        if (left <= 0) break;
      }
    } finally {
      await snapshot.close();
    }
  });
  printer.end();
}

export async function exportPlants({ q, tags, sort, format }: ExportInput): Promise<void> {
  await withStore(async (store) =>
    printStream(exportStream(await store.plants.export({ q, tags, sort }), format), process.stdout, { csv: format === 'csv' }),
  );
}

/**
 * Strict by default, as through --url: a row with a field NewPlant does not name is refused, naming its line,
 * and nothing is stored (a file should say what it means: a misspelt "tga" would lose every tag in silence).
 * `lenient`: such fields are ignored, and each is said once with the number of rows it was in, in the
 * service's words (the Warning headers of POST /plants/import).
 */
export async function importFile({ file, format: stated, createOnly, lenient }: ImportInput): Promise<void> {
  // Open the file first: a missing one is one line, and no store is opened for nothing.
  const source = await openSource(file);
  const { format, bytes } = stated === undefined ? await sniff(source) : { format: stated, bytes: source };
  let shown = 0;
  const unknownFields = importUnknownFields(!lenient);
  const { result, where } = await withStore(async (store, config, where) => {
    // Counted from when rows are read, not from when the store began to open (its migrations).
    shown = Date.now();
    const imported = await importPlants(store.plants, bytes, {
      format,
      createOnly,
      unknownFields,
      limit: config.importBodyLimit,
      maxRowBytes: config.importMaxRowBytes,
      progress: (rows) => {
        if (Date.now() - shown < PROGRESS_MS) return;
        shown = Date.now();
        say(`plant-store: ${count(rows, 'row')} read…`);
      },
    });
    return { result: imported, where };
  }).catch((error: unknown) => {
    // A bad row is the input's fault: say where, as HTTP does (exit 1, nothing stored).
    if (error instanceof ImportRowError || error instanceof ImportTooLargeError) throw new Error(`nothing imported: ${error.message}`);
    throw error;
  });
  for (const text of unknownFields.ignored.warnings()) say(`plant-store: warning: ${text}`);
  const total = count(result.created + result.replaced, 'plant');
  say(`imported ${total} from ${format} into ${where}: ${result.created} created, ${result.replaced} replaced`);
  printJson(result);
}
