import { IMPORT_FORMATS } from '../plants/import.js';
import { PLANT_SORTS } from '../store/store.js';
import { apiTarget, URL_OPTION } from './api-target.js';
import type { Command, OptionSpec } from './command.js';
import { exportInput, importInput, listInput, newPlant, plantId } from './plant-args.js';
import { LIST_FORMATS } from './plant-output.js';
import * as http from './plants-http.js';
import * as local from './plants-store.js';

/**
 * `plant-store plants create|get|list|delete|import|export`: on the store DATABASE_URL names (an operator on
 * the server's machine), or through a running service's API with --url or PLANT_STORE_URL (from anywhere,
 * with a token). Both ways do the same: the same code as the HTTP routes on the store, the API itself over HTTP.
 */

const READS = 'with plants:read';
const WRITES = 'with plants:write';

const FILTERS: Record<string, OptionSpec> = {
  q: { type: 'string', value: 'TEXT', help: 'only the plants whose name contains TEXT, in any case (as GET /plants?q=)' },
  tag: { type: 'string', value: 'TAG', multiple: true, help: 'only the plants with this tag, or with any of several' },
  sort: { type: 'string', value: 'ORDER', choices: PLANT_SORTS, help: 'id (the default), -id, name or -name; ties on name by id' },
};

export const plantsCommand: Command = {
  name: 'plants',
  summary: 'Plants: create, read, list and delete them, import a whole catalogue or export it; on the store, or through a service with --url.',
  usesStore: true,
  actions: {
    create: {
      summary: 'store a plant (as POST /plants: a plant with that id is replaced); prints it as JSON',
      details:
        'Checked by the rules of POST /plants (a name of 1 to 256 characters, a tag of at most 64); stderr says whether it was created or replaced, and where.',
      options: {
        id: { type: 'string', value: 'ID', required: true, help: 'its id, an integer (int64: up to 9223372036854775807, exact)' },
        name: { type: 'string', value: 'NAME', required: true, help: 'its name' },
        tag: { type: 'string', value: 'TAG', help: 'its tag (none without it)' },
        url: URL_OPTION,
      },
      async run(given) {
        const plant = newPlant(given);
        const target = apiTarget(given, WRITES);
        return target ? http.create(target, plant) : local.create(plant);
      },
    },
    get: {
      summary: 'print one plant as JSON',
      args: [{ name: 'ID', required: true, help: 'the id of the plant' }],
      options: { url: URL_OPTION },
      async run(given) {
        const id = plantId(given.args[0]!, 'ID');
        const target = apiTarget(given, READS);
        return target ? http.get(target, id) : local.get(id);
      },
    },
    list: {
      summary: 'list every plant the filters select (or --limit many), in id order unless --sort says another',
      options: {
        ...FILTERS,
        limit: { type: 'string', value: 'N', help: 'at most N plants (default: all of them)' },
        format: { type: 'string', value: 'FORMAT', choices: LIST_FORMATS, help: 'ndjson or table (default: table on a terminal, ndjson otherwise)' },
        url: URL_OPTION,
      },
      async run(given) {
        const input = listInput(given);
        const target = apiTarget(given, READS);
        return target ? http.list(target, input) : local.list(input);
      },
    },
    delete: {
      summary: 'delete a plant',
      args: [{ name: 'ID', required: true, help: 'the id of the plant' }],
      options: { url: URL_OPTION },
      async run(given) {
        const id = plantId(given.args[0]!, 'ID');
        const target = apiTarget(given, WRITES);
        return target ? http.remove(target, id) : local.remove(id);
      },
    },
    import: {
      summary: 'import plants, all or nothing; prints {"created","replaced"}',
      details: 'NDJSON, a JSON array or CSV as exports write it; the first bad row stops it, named, and nothing is stored (docs/import-export.md).',
      args: [{ name: 'FILE|-', required: true, help: 'the file to read, or - for standard input' }],
      options: {
        format: { type: 'string', value: 'FORMAT', choices: IMPORT_FORMATS, help: 'ndjson, json or csv (default: read from the input)' },
        mode: {
          type: 'string',
          value: 'MODE',
          choices: ['replace', 'create-only'],
          help: 'replace (the default), or create-only: nothing is stored if any of the plants exists',
        },
        lenient: {
          type: 'boolean',
          help: 'ignore fields a plant does not have (each said on stderr) rather than refuse their rows',
        },
        url: URL_OPTION,
      },
      async run(given) {
        const input = importInput(given);
        const target = apiTarget(given, WRITES);
        return target ? http.importFile(target, input) : local.importFile(input);
      },
    },
    export: {
      summary: 'every plant the filters select, in id order unless --sort says another, to stdout',
      details: 'NDJSON (one plant per line, ids exact) or CSV (RFC 4180, header id,name,tag), streamed from one snapshot.',
      options: {
        format: { type: 'string', value: 'FORMAT', choices: ['ndjson', 'csv'], help: 'ndjson (the default) or csv' },
        ...FILTERS,
        url: URL_OPTION,
      },
      async run(given) {
        const input = exportInput(given);
        const target = apiTarget(given, READS);
        return target ? http.exportPlants(target, input) : local.exportPlants(input);
      },
    },
  },
};
