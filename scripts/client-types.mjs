// Writes packages/client/src/openapi-types.ts, the client package's types, from the OpenAPI document the service serves.
// `npm run build` runs it between compiling the server and compiling the client package. The document is made
// in-process by the compiled buildApp on a throwaway SQLite store: no network, no running server.
// It does nothing when nothing it reads changed since it last wrote the file (the compiled service, this
// script, package-lock.json for the dependencies' versions, and the file itself): dist/client-types.stamp
// keeps their fingerprint. A build with no change then costs no start of the app.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const OUTPUT = new URL('../packages/client/src/openapi-types.ts', import.meta.url);

/** The served document, as GET /openapi.json answers it. @returns {Promise<import('openapi-typescript').OpenAPI3>} */
async function servedDocument() {
  const [{ buildApp }, { SqliteStore }] = await Promise.all([import('../dist/src/app.js'), import('../dist/src/store/sqlite/store.js')]);
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

/** The types, as openapi-typescript writes them from the served document. */
async function generate() {
  const [{ default: openapiTS, astToString, COMMENT_HEADER, NULL, NUMBER, tsUnion }, { default: ts }] = await Promise.all([
    import('openapi-typescript'),
    import('typescript'),
  ]);
  const BIGINT = ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword);
  /**
   * `format: int64` is what the client really gives and takes: a number when it is a safe integer, a bigint
   * beyond 2^53 (the exact parser's answer, packages/client/src/json.ts). openapi-typescript would say `number`.
   * @param {{ type?: string | string[]; format?: string }} schema
   */
  const transform = (schema) => {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (schema.format !== 'int64' || !types.includes('integer')) return undefined;
    return tsUnion([NUMBER, BIGINT, ...(types.includes('null') ? [NULL] : [])]);
  };
  const types = astToString(await openapiTS(await servedDocument(), { transform }));
  const origin = '// Made by `npm run build` (scripts/client-types.mjs) from the served GET /openapi.json; not committed.\n\n';
  return COMMENT_HEADER + origin + types;
}

/** @param {string | Buffer} data */
const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/** A fingerprint of what the types are made from: every compiled module of the service, this script, the lock file. */
function inputsFingerprint() {
  const hash = createHash('sha256');
  const compiled = fileURLToPath(new URL('../dist/src/', import.meta.url));
  /** @type {string[]} */
  const names = readdirSync(compiled, { recursive: true, encoding: 'utf8' });
  for (const name of names.filter((n) => n.endsWith('.js')).sort()) hash.update(`${name}\0${sha256(readFileSync(join(compiled, name)))}\n`);
  for (const file of ['scripts/client-types.mjs', 'package-lock.json'])
    hash.update(`${file}\0${sha256(readFileSync(new URL(`../${file}`, import.meta.url)))}\n`);
  return hash.digest('hex');
}

const STAMP = fileURLToPath(new URL('../dist/client-types.stamp', import.meta.url));
const inputs = inputsFingerprint();
/** What the last run wrote down: the fingerprint of the inputs, the file's hash (two lines); none when it did not. */
const [stampInputs, stampOutput] = existsSync(STAMP) ? readFileSync(STAMP, 'utf8').split('\n') : [];
const current = existsSync(OUTPUT) ? sha256(readFileSync(OUTPUT)) : undefined;
if (current === undefined || stampInputs !== inputs || stampOutput !== current) {
  const text = await generate();
  // Written only when it changed: an unchanged file leaves the client package's build nothing to do.
  if (sha256(text) !== current) writeFileSync(OUTPUT, text);
  writeFileSync(STAMP, `${inputs}\n${sha256(text)}\n`);
}
