import { Type, type FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { RequestDeadlines } from '../http/deadlines.js';
import { acceptedMediaTypes, errorResponses, HttpError, unsupportedMediaType } from '../http/errors.js';
import { fingerprintBody } from '../http/fingerprint.js';
import { KEY_STATUSES } from '../http/idempotency.js';
import { example } from '../http/error-codes.js';
import { Deferred, writeOf, type Writes } from '../http/writes.js';
import { applyHandling } from '../http/unknown-fields.js';
import type { Handling } from '../http/preferences.js';
import { ImportConflictError, type PlantStore } from '../store/store.js';
import type { Inputs } from '../store/writes.js';
import { answerImport } from './answers.js';
import { ImportRowError, ImportTooLargeError } from './import-errors.js';
import { importUnknownFields, readRows, stageImport, type ImportFormat } from './import.js';
import { ImportHeaders, ImportQuery, ImportResult, NewPlant } from './schema.js';

export interface ImportRouteOptions {
  plants: PlantStore;
  writes: Writes;
  /** IMPORT_BODY_LIMIT. */
  bodyLimit: number;
  /** IMPORT_MAX_ROW_BYTES. */
  maxRowBytes: number;
  /** IMPORT_TIMEOUT_MS: the time the client has to send the whole body, instead of REQUEST_TIMEOUT_MS. */
  timeoutMs: number;
  deadlines: RequestDeadlines;
  /** UNKNOWN_FIELDS: what a row's unknown fields get by default (a request's Prefer: handling chooses for itself). */
  unknownFields: Handling;
}

/** The import's Warning: an unknown field of its JSON rows, with how many rows had it. */
const IMPORT_WARNING = {
  Warning: {
    description:
      'One `299 - "unknown field \\"tga\\" was ignored in 3 rows"` per field of NDJSON or JSON rows that NewPlant does not name, the first 20; then one counting the others (`12 more unknown fields were ignored, in 40 rows`; past 1,000 distinct names, `more than 1000 …`). Send `Prefer: handling=strict` to have the import refused instead: 400 naming the row, nothing stored',
    schema: { type: 'string' },
  },
};

/** The media types an import comes in, by format. */
const MEDIA_TYPES: Record<ImportFormat, string> = { ndjson: 'application/x-ndjson', json: 'application/json', csv: 'text/csv' };

function formatOf(contentType: string | undefined): ImportFormat {
  const type = String(contentType).split(';', 1)[0]!.trim().toLowerCase();
  return (Object.keys(MEDIA_TYPES) as ImportFormat[]).find((format) => MEDIA_TYPES[format] === type) ?? 'json';
}

/** Whether the body stopped because the client closed the connection (Node's `aborted` reset), not for a reason of ours. */
function clientWentAway(body: IncomingMessage, error: unknown): boolean {
  return body.readableAborted && (error as NodeJS.ErrnoException).code === 'ECONNRESET';
}

/**
 * POST /plants/import, in a plugin of its own: its bodies reach the handler as the request stream (its
 * own content-type parsers, which no other route sees), parsed a row at a time, never held whole.
 */
export const plantImportRoute: FastifyPluginCallbackTypebox<ImportRouteOptions> = (
  app,
  { plants, writes, bodyLimit, maxRowBytes, timeoutMs, deadlines, unknownFields: fallback },
  done,
) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(Object.values(MEDIA_TYPES), (request, payload, parsed) => {
    // A keyed import's fingerprint takes the body as the rows are read (onBytes).
    fingerprintBody(request);
    parsed(null, payload);
  });

  app.post(
    '/plants/import',
    {
      config: { auth: 'plants:write' },
      // The import's own limit, which its handler enforces as it reads (Fastify reads no stream it hands
      // on): said here for what reads the route's limit (an Expect: 100-continue is answered within it).
      bodyLimit,
      onRequest: (request, _reply, next) => {
        deadlines.extend(request.raw, timeoutMs);
        next();
      },
      schema: {
        operationId: 'importPlants',
        tags: ['plants'],
        summary: 'Imports many plants at once, all or nothing: NDJSON (one NewPlant per line), a JSON array of NewPlants or CSV, streamed',
        querystring: ImportQuery,
        headers: ImportHeaders,
        requestBodyDoc: {
          [MEDIA_TYPES.ndjson]: {
            schema: { type: 'string', description: 'One NewPlant per line; blank lines are skipped' },
            example: '{"id":1,"name":"Monstera","tag":"tropical"}\n{"id":2,"name":"Boston Fern"}\n',
          },
          [MEDIA_TYPES.json]: {
            schema: Type.Array(NewPlant),
            example: [
              { id: 1, name: 'Monstera', tag: 'tropical' },
              { id: 2, name: 'Boston Fern' },
            ],
          },
          [MEDIA_TYPES.csv]: {
            schema: {
              type: 'string',
              description:
                "As exports write it: RFC 4180, CRLF or LF, the header `id,name,tag` (tag may be left out), an empty tag cell for no tag; the `'` exports put before a cell starting with =, +, -, @, tab or CR is taken off",
            },
            example: 'id,name,tag\r\n1,Monstera,tropical\r\n2,Boston Fern,\r\n',
          },
        },
        response: { 200: ImportResult, ...errorResponses(400, 401, 403, 409, 413, 415, 503, ...KEY_STATUSES) },
        responseDescriptions: {
          200: 'Every row stored: how many plants were created and replaced (distinct ids; a repeated id: the last row wins)',
          400: 'Error response: a row is not a valid NewPlant, or is longer than IMPORT_MAX_ROW_BYTES (the message names its line, 1-based, or its element, 0-based, and each field at fault); nothing stored',
          409: 'Error response: mode=create-only and an id exists already, nothing stored; or a request with this Idempotency-Key is still running',
          413: 'Error response: the body is larger than IMPORT_BODY_LIMIT; nothing stored',
        },
        responseHeaders: { 200: IMPORT_WARNING },
        errorExamples: [
          example('invalid_import', 'line 2: name is required'),
          example('invalid_import', 'element 0: id must be an integer'),
          example('unknown_field', 'line 2: the row has an unknown field "tga": did you mean "tag"?'),
          example('body_incomplete', 'the client closed the connection before the body ended; nothing stored'),
          example('import_conflict', new ImportConflictError(1).message),
          example('body_too_large', new ImportTooLargeError(bodyLimit).message),
        ],
      },
    },
    async (request, reply) => {
      // No body and no Content-Type: Fastify hands on no stream, as no parser ran. Refused as a body of no
      // media type the import takes (415 naming those it takes), as one with a body is.
      if (request.body === undefined) {
        const accepted = Object.values(MEDIA_TYPES);
        throw new HttpError('unsupported_media_type', unsupportedMediaType(undefined, accepted), { headers: acceptedMediaTypes('POST', accepted) });
      }
      // A length said over the limit is refused before a byte is read: the client need not send a gigabyte to
      // hear it (nor the service parse and stage one); with Expect: 100-continue, before it sends anything.
      if (Number(request.headers['content-length']) > bodyLimit) {
        reply.header('connection', 'close');
        throw new HttpError('body_too_large', new ImportTooLargeError(bodyLimit).message);
      }
      const unknownFields = importUnknownFields(applyHandling(request, reply, fallback) === 'strict');
      const options = {
        format: formatOf(request.headers['content-type']),
        createOnly: request.query.mode === 'create-only',
        limit: bodyLimit,
        maxRowBytes,
        unknownFields,
        onBytes: request.fingerprint?.update,
      };
      // Not destroyed when the import stops early (a bad row, too large): that would reset the connection
      // under the client still sending, before it reads the answer; the rest is read and dropped instead
      // (http/refused-body.ts).
      const body = (request.body as Readable).iterator({ destroyOnReturn: false });
      const rows = new Deferred<Inputs['import']>(
        (commit) => stageImport(plants, body, options, (session) => commit({ session, createOnly: options.createOnly })),
        // A replay reads the rows through too, for its fingerprint and their unknown fields' warnings.
        () => readRows(body, options),
      );
      try {
        return await writes.apply(reply, writeOf(request, 'import', rows), (_, imported) => answerImport(reply, imported, unknownFields.ignored));
      } catch (error) {
        if (clientWentAway(request.raw, error)) {
          // The client's doing, not a fault: a line at info, no stack. Nothing was stored (all or nothing).
          // Fastify writes no answer to the closed connection (and so no access line follows).
          request.log.info('import: the client went away before the body ended; nothing stored');
          throw new HttpError('body_incomplete', 'the client closed the connection before the body ended; nothing stored');
        }
        // The rest of a refused body is not read: the connection closes after the answer.
        reply.header('connection', 'close');
        if (error instanceof ImportRowError) throw new HttpError(error.code, error.message);
        if (error instanceof ImportTooLargeError) throw new HttpError('body_too_large', error.message);
        throw error;
      }
    },
  );
  done();
};
