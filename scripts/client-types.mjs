// Writes packages/client/src/openapi-types.ts, the client package's types, from the OpenAPI document the service serves.
// `npm run build` runs it between compiling the server and compiling the client package. The document is made
// in-process by the compiled buildApp on a throwaway SQLite store: no network, no running server.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER, NULL, NUMBER, tsUnion } from 'openapi-typescript';
import ts from 'typescript';
import { buildApp } from '../dist/src/app.js';
import { SqliteStore } from '../dist/src/store/sqlite/store.js';

const OUTPUT = new URL('../packages/client/src/openapi-types.ts', import.meta.url);

/** The served document, as GET /openapi.json answers it. @returns {Promise<import('openapi-typescript').OpenAPI3>} */
async function servedDocument() {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-openapi-'));
  const store = SqliteStore.open(`file:${join(dir, 'plants.db')}`, { synchronous: 'OFF', busyTimeoutMs: 1000 });
  try {
    const app = await buildApp({ config: { tokens: [], bodyLimit: 1024 }, store });
    try {
      const response = await app.inject({ method: 'GET', url: '/openapi.json' });
      if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}: ${response.body}`);
      return /** @type {import('openapi-typescript').OpenAPI3} */ (response.json());
    } finally {
      await app.close();
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const BIGINT = ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword);

/**
 * `format: int64` is what the client really gives and takes: a number when it is a safe integer, a bigint
 * beyond 2^53 (the exact parser's answer, packages/client/src/json.ts). openapi-typescript would say `number`.
 * @param {{ type?: string | string[]; format?: string }} schema
 */
function transform(schema) {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (schema.format !== 'int64' || !types.includes('integer')) return undefined;
  return tsUnion([NUMBER, BIGINT, ...(types.includes('null') ? [NULL] : [])]);
}

const types = astToString(await openapiTS(await servedDocument(), { transform }));
const origin = '// Made by `npm run build` (scripts/client-types.mjs) from the served GET /openapi.json; not committed.\n\n';
writeFileSync(OUTPUT, COMMENT_HEADER + origin + types);
