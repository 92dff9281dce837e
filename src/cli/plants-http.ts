import { ReadableStream } from 'node:stream/web';
import type { StoredPlant } from '../model/plant.js';
import type { PlantId } from '../model/plant-id.js';
import type { PlantSort } from '../store/store.js';
import { replacedWarning } from '../plants/answers.js';
import { LIST_LIMIT_MAX } from '../plants/schema.js';
import { count } from '../words.js';
import { Api, ApiError, atService, nextPage } from './api.js';
import type { ApiTarget } from './api-target.js';
import { openSource, sniff } from './import-source.js';
import { innermost } from './network-failures.js';
import { printJson, printStream, say } from './output.js';
import { PROGRESS_MS, type ExportInput, type ImportInput, type ListInput, type NewPlantInput } from './plant-args.js';
import { plantPrinter } from './plant-output.js';

/**
 * The plant commands through a running service's API (--url), with the typed client: nothing here opens a
 * store. What the service refuses comes out as its message. Writes that take plants send
 * `Prefer: handling=strict` (RFC 7240): a field the service does not know is refused rather than ignored,
 * since what the CLI sends is made by the CLI, or, for an import, a file that should say what it means;
 * `plants import --lenient` sends `Prefer: handling=lenient`, and the service's warnings say what it ignored.
 */

const STRICT = { prefer: 'handling=strict' };
const LENIENT = { prefer: 'handling=lenient' };

/** GET /plants's query parameters, as the CLI sends them (test/cli/api-types.test.ts holds them to the document's). */
export type ListQuery = {
  q?: string | undefined;
  tag?: string[] | undefined;
  sort?: PlantSort;
  limit?: number;
  cursor?: string | undefined;
};

/** POST /plants/import's query parameters. */
export type ImportQuery = {
  mode?: 'create-only';
};
const MEDIA_TYPES = { ndjson: 'application/x-ndjson', json: 'application/json', csv: 'text/csv' } as const;

export async function create(target: ApiTarget, plant: NewPlantInput): Promise<void> {
  const api = await Api.connect(target);
  // POST /plants answers 200 either way (the specification's rule); a replacement is said in a Warning.
  const replaced = replacedWarning(plant.id);
  const { data, warnings } = await api.call('post', '/plants', { body: plant, headers: STRICT }, { hidden: (warning) => warning === replaced });
  const stored = data as { name: string; tag?: string };
  say(`${warnings.includes(replaced) ? 'replaced' : 'created'} plant ${plant.id} at ${api.where}`);
  printJson({ id: plant.id, name: stored.name, tag: stored.tag });
}

export async function get(target: ApiTarget, id: PlantId): Promise<void> {
  const api = await Api.connect(target);
  const { data } = await api.call('get', '/plants/{id}', { params: { path: { id } } }).catch(atService(api));
  printJson(data);
}

export async function remove(target: ApiTarget, id: PlantId): Promise<void> {
  const api = await Api.connect(target);
  await api.call('delete', '/plants/{id}', { params: { path: { id } } }).catch(atService(api));
  say(`deleted plant ${id} at ${api.where}`);
}

/** Every plant the selection holds, page after page (Link rel="next"), printed as each page comes; at most `limit`. */
export async function list(target: ApiTarget, { q, tags, sort, limit, format }: ListInput): Promise<void> {
  const api = await Api.connect(target);
  const printer = plantPrinter(format);
  let left = limit ?? Infinity;
  let cursor: string | undefined;
  do {
    const query: ListQuery = { q, tag: tags, sort, limit: Math.min(LIST_LIMIT_MAX, left), cursor };
    const { data, response } = await api.call('get', '/plants', { params: { query } });
    const page = data as StoredPlant[];
    await printer.add(page);
    left -= page.length;
    cursor = nextPage(response.headers.get('link'), 'cursor');
  } while (cursor !== undefined && left > 0);
  printer.end();
}

export async function exportPlants(target: ApiTarget, { q, tags, sort, format }: ExportInput): Promise<void> {
  const api = await Api.connect(target);
  const query: ListQuery = { q, tag: tags, sort };
  const { data } = await api.call('get', '/plants', { params: { query }, headers: { accept: MEDIA_TYPES[format] }, parseAs: 'stream' });
  try {
    await printStream(data as ReadableStream<Uint8Array>, process.stdout, { csv: format === 'csv' });
  } catch (error) {
    // The answer began and its body broke off (undici's bare "terminated"): what was printed is a part.
    if (!(error instanceof TypeError)) throw error;
    const cause = innermost(error) as NodeJS.ErrnoException;
    throw new Error(`the export from ${api.where} was cut off before its end (${cause.code ?? cause.message}): what was printed is incomplete`, {
      cause: error,
    });
  }
}

/** The file (or standard input) streamed to POST /plants/import as it is read, its format as its media type. */
export async function importFile(target: ApiTarget, { file, format: stated, createOnly, lenient }: ImportInput): Promise<void> {
  const source = await openSource(file);
  const { format, bytes } = stated === undefined ? await sniff(source) : { format: stated, bytes: source };
  const api = await Api.connect(target);
  let sent = 0;
  let shown = Date.now();
  /** A file that fails while it is sent: its own error, not the connection's. */
  let unreadable: unknown;
  const counted = (async function* () {
    try {
      for await (const chunk of bytes) {
        sent += chunk.length;
        if (Date.now() - shown >= PROGRESS_MS) {
          shown = Date.now();
          say(`plant-store: ${(sent / 2 ** 20).toFixed(1)} MiB sent…`);
        }
        yield chunk;
      }
    } catch (error) {
      unreadable = error;
      throw error;
    }
  })();
  const answer = await api
    .call('post', '/plants/import', {
      params: { query: (createOnly ? { mode: 'create-only' } : {}) satisfies ImportQuery },
      body: ReadableStream.from(counted),
      // Sent as it is read: not held, and not made into JSON.
      bodySerializer: (body) => body,
      duplex: 'half',
      headers: { ...(lenient ? LENIENT : STRICT), 'content-type': MEDIA_TYPES[format] },
    })
    .catch((error: unknown) => {
      // Refused (a bad row, an id that exists with create-only, too large): all or nothing, as on the store.
      // The service may say it already ("…: nothing was imported"): said once.
      if (error instanceof ApiError) throw new Error(`nothing imported: ${error.message.replace(/: nothing was imported$/, '')}`);
      throw unreadable ?? error;
    });
  const result = answer.data as { created: number; replaced: number };
  say(
    `imported ${count(result.created + result.replaced, 'plant')} from ${format} into ${api.where}: ${result.created} created, ${result.replaced} replaced`,
  );
  printJson(result);
}
