import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tempDir } from '../helpers.js';
import { startServer, type ServerProcess } from '../process.js';
import { workerPids } from '../process/supervised.js';
import { postgresUnavailableReason, TestPostgres } from '../store/postgres/pg-server.js';
import { needs, until } from '../toolkit.js';

/**
 * Bulk import against the real server process: a 200 MB NDJSON body (100 MB on PostgreSQL) streamed in adds a bounded amount
 * to the process's memory (the body is never held whole), on both stores; and a client that goes away
 * in the middle of an export stops it, with nothing left open.
 */

const TOKEN = 'import-process-token-0123456789abc';
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const TARGET_BYTES = Number(process.env.IMPORT_TEST_MB ?? 200) * 2 ** 20;
/**
 * PostgreSQL's import is half as large: it takes twice SQLite's time a row (about 250 s for 200 MB in CI, the
 * suite's longest test), and what it checks holds at 100 MB: the growth bound below is what the process adds
 * whatever the size (a body held whole would add its 100 MB and more on top, past the bound), and the absolute
 * peak is the SQLite target's. IMPORT_TEST_MB sets both (PostgreSQL's at half).
 */
const POSTGRES_BYTES = TARGET_BYTES / 2;

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)![1]) / 1024;
}

/** POSTs generated NDJSON lines, `bytes` of them, with backpressure; resolves with the answer. */
function streamImport(server: ServerProcess, bytes: number): Promise<{ status: number; body: string; rows: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${server.url}/plants/import`,
      { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, rows }));
      },
    );
    req.on('error', reject);
    let sent = 0;
    let rows = 0;
    const write = () => {
      while (sent < bytes) {
        let chunk = '';
        for (let i = 0; i < 500; i++, rows++) chunk += `{"id":${rows},"name":"Monstera deliciosa number ${rows}","tag":"bulk-${rows % 97}"}\n`;
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

/**
 * The pid of the one worker that serves (the process started is its supervisor, which neither reads the body
 * nor opens the store: measured there, neither check below could fail).
 */
function workerPid(server: ServerProcess): number {
  const pids = workerPids(server.stdout);
  assert.equal(pids.length, 1, `one worker said it was ready: ${pids.join(', ')}`);
  return pids[0]!;
}

/**
 * The worker's peak RSS a 200 MB import must stay under, absolute (the service's target), where it is
 * measured: SQLite on Node 20. PostgreSQL's and later Nodes' are held by the growth bound only.
 */
const SQLITE_PEAK_MB = NODE_MAJOR <= 20 ? 200 : undefined;

async function bigImport(server: ServerProcess, bytes: number, what: string, diagnostic: (text: string) => void, peakMb?: number): Promise<void> {
  const worker = workerPid(server);
  const before = peakRssMb(worker);
  const started = Date.now();
  const { status, body, rows } = await streamImport(server, bytes);
  const seconds = (Date.now() - started) / 1000;
  assert.equal(status, 200, `${body}\n${server.stdout.slice(-3000)}`);
  assert.deepEqual(JSON.parse(body), { created: rows, replaced: 0 });
  const peak = peakRssMb(worker);
  diagnostic(
    `${what}: ${(bytes / 2 ** 20).toFixed(0)} MB, ${rows} rows in ${seconds.toFixed(1)} s; the worker's peak RSS ${before.toFixed(0)} MB before, ${peak.toFixed(0)} MB after`,
  );
  // Flat: the body is never held whole, so the import adds a bounded amount to what the process held
  // before, whatever its size. Measured for 200 MB: 80-100 MB more on Node 20 (V8's heap grows further while
  // its collector is starved of CPU on a loaded machine); later Nodes let the young generation grow to
  // 3 × 32 MB (Node 20: 3 × 16 MB), so they get more room. And a worker starts with its young generation
  // small (process/v8-flags.ts), which grows back to 2 × 16 MB while it imports: 32 MB more in the difference.
  // Measured on the worker (Node 20): SQLite 88-94 → 157-159 MB (it was 172-219 before rows were handed
  // over to the store, plants/import.ts), PostgreSQL 82-83 → 175-181 MB.
  const bound = (NODE_MAJOR <= 20 ? 125 : 150) + 32;
  assert.ok(peak - before < bound, `peak RSS ${peak.toFixed(0)} MB, ${(peak - before).toFixed(0)} MB more than before the import`);
  if (peakMb !== undefined)
    assert.ok(peak < peakMb, `peak RSS ${peak.toFixed(0)} MB, not under ${peakMb} MB (${before.toFixed(0)} MB before the import)`);
  const count = await fetch(`${server.url}/plants?limit=1`, { headers: { authorization: `Bearer ${TOKEN}`, prefer: 'count=exact' } });
  assert.equal(count.headers.get('x-total-count'), String(rows));
}

/** Starts an export, reads a little of it, and goes away; then the server must have let go of it. */
async function abandonExport(server: ServerProcess): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const req = httpRequest(`${server.url}/plants?format=csv`, { headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve() : reject(error)));
    req.end();
  });
}

describe('bulk import and export, real process', () => {
  test(
    `SQLite: a ${TARGET_BYTES / 2 ** 20} MB import with flat memory; abandoned exports leave nothing open`,
    { timeout: 10 * 60_000 },
    async (t) => {
      const server = await startServer(after, { env: { DATABASE_URL: `file:${join(tempDir(after), 'big.db')}`, PLANT_STORE_TOKENS: TOKEN } });
      await bigImport(server, TARGET_BYTES, 'SQLite', (text) => t.diagnostic(text), SQLITE_PEAK_MB);
      // Each export opens the database file once more; an export the client abandoned must close it. (SQLite
      // keeps one closed descriptor of a file for reuse while other connections of the process hold locks on
      // it, so the count may rise by one once; it must not grow with the number of exports.)
      const pid = workerPid(server);
      const databaseHandles = () => readdirSync(`/proc/${pid}/fd`).filter((fd) => /big\.db$/.test(readlinkQuiet(`/proc/${pid}/fd/${fd}`))).length;
      const before = databaseHandles();
      assert.ok(before > 0, 'the worker holds the database file open');
      for (let i = 0; i < 3; i++) await abandonExport(server);
      // Each abandoned export closes its file when the server sees the client gone: wait for that.
      const afterFew = await until(() => {
        const open = databaseHandles();
        return open <= before + 1 && open;
      }, `the three abandoned exports' files to close (${before} database handles before)`);
      for (let i = 0; i < 10; i++) await abandonExport(server);
      await until(() => databaseHandles() === afterFew, 'ten more abandoned exports to leave nothing open');
      const ok = await fetch(`${server.url}/plants?limit=1`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(ok.status, 200);
      await server.stop();
    },
  );

  const skip = needs('the large import on PostgreSQL', postgresUnavailableReason());
  test(
    `PostgreSQL: a ${POSTGRES_BYTES / 2 ** 20} MB import with flat memory; abandoned exports release their connection`,
    { skip, timeout: 10 * 60_000 },
    async (t) => {
      const db = await TestPostgres.start(after);
      const url = await db.createDatabase();
      const server = await startServer(after, { env: { DATABASE_URL: url, PLANT_STORE_TOKENS: TOKEN, WEB_CONCURRENCY: '1', PG_POOL_SIZE: '4' } });
      await bigImport(server, POSTGRES_BYTES, 'PostgreSQL', (text) => t.diagnostic(text));
      // More abandoned exports than the pool has connections: each must give its connection back.
      for (let i = 0; i < 8; i++) await abandonExport(server);
      const ok = await fetch(`${server.url}/plants?format=ndjson&tag=bulk-1`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(ok.status, 200);
      assert.ok((await ok.text()).length > 0);
      await server.stop();
    },
  );
});

function readlinkQuiet(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}
