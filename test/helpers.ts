import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { after } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type App } from '../src/app.js';
import { ERROR_CODES, statusOf, type ErrorCode } from '../src/http/error-codes.js';
import type { Config } from '../src/config/config.js';
import { createToken } from '../src/auth/tokens.js';
import { SqliteStore } from '../src/store/sqlite/store.js';
import type { Scope } from '../src/model/scopes.js';
import type { ListOptions, PlantStore, Store } from '../src/store/store.js';
import type { StoredPlant } from '../src/model/plant.js';
import { parseJson } from '@plant-store/client/json';
import type { BatchTracing } from '../src/store/batcher.js';
import type { Tracing } from '../src/tracing/sdk.js';
import type { Resolver } from '../src/webhooks/network-guard.js';

/** A page as plants, for tests that want objects rather than JSON: ids stay exact. */
export async function listPlants(plants: Pick<PlantStore, 'page'>, options: ListOptions): Promise<StoredPlant[]> {
  return parseJson((await plants.page(options)).json) as StoredPlant[];
}

/**
 * Set (to a superuser URL of a running test server) by test/store/postgres/http.process.test.ts when it runs the
 * in-process HTTP suites again: then testApp opens a fresh PostgreSQL database instead of SQLite.
 */
export const TEST_PG_ENV = 'PLANT_STORE_TEST_PG_ADMIN_URL';

/** The static full-access token every test app accepts. */
export const TOKEN = 'test-token-full-access-0123456789a';

/**
 * The Error shape: the specification's error and message, and the code of the reason (whose status is the
 * answer's), and a field only as a string; nothing else.
 */
export function assertErrorShape(body: unknown, status: number, code?: ErrorCode): void {
  const { error, message, code: given, field, ...rest } = body as Record<string, unknown>;
  assert.deepEqual(rest, {}, `the Error shape has error, message, code and field only: ${JSON.stringify(body)}`);
  assert.equal(error, status);
  assert.equal(typeof message, 'string');
  assert.ok(typeof given === 'string' && given in ERROR_CODES, `an error code: ${JSON.stringify(body)}`);
  assert.equal(statusOf(given as ErrorCode), status, `the code ${String(given)} is of another status`);
  if (code !== undefined) assert.equal(given, code, JSON.stringify(body));
  assert.ok(field === undefined || typeof field === 'string', JSON.stringify(body));
}

/** A fresh directory under the system temp dir, removed when the test file ends. */
/**
 * A cleanup run when the test file's process exits: for a temporary folder made inside a suite's `before`
 * hook (a store contract's `open()`), where node:test gives an `after` to the suite's first test, whose end
 * then removed the folder of a store the suite's later tests went on writing (the SQLite store now refuses
 * writes to a file deleted under it: a contract failed in one run of three).
 */
export const atExit = ((fn: () => void) => void process.once('exit', () => fn())) as unknown as typeof after;

export function tempDir(cleanup: typeof after): string {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-test-'));
  // Hooks run in the order they were registered, so this one usually runs before those that stop what the
  // test started, and a process may still be writing here (Chromium in its profile: ENOTEMPTY after the
  // retries, seen in CI under load). A hook that throws skips the hooks after it: the browser, the servers
  // and the test file's process were left running, and the whole run waited for ever. So what cannot be
  // removed yet is removed when the file's process exits, after every other hook has stopped its process;
  // should it fail even then, the exit fails loudly.
  cleanup(() => {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    } catch {
      process.once('exit', () => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
    }
  });
  return dir;
}

export function openSqlite(dir: string, tracing?: BatchTracing): SqliteStore {
  return SqliteStore.open(`file:${join(dir, 'plants.db')}`, { synchronous: 'FULL', busyTimeoutMs: 5000, tracing });
}

/**
 * A fresh, empty store: SQLite in a temp dir, or a new PostgreSQL database when the suite is being run
 * against PostgreSQL (test/store/postgres/http.process.test.ts sets TEST_PG_ENV). The caller closes it. `tracing`
 * traces its batches.
 */
export async function openTestStore(cleanup: typeof after, tracing?: BatchTracing): Promise<Store> {
  // Loaded only when asked for: in-process tests on SQLite never load the PostgreSQL harness or driver.
  const pgAdminUrl = process.env[TEST_PG_ENV];
  if (pgAdminUrl) {
    const [{ PostgresStore }, { createMigratedDatabase }] = await Promise.all([
      import('../src/store/postgres/store.js'),
      import('./store/postgres/pg-server.js'),
    ]);
    return PostgresStore.open(await createMigratedDatabase(pgAdminUrl), { poolSize: 4, readPoolSize: 2, timeoutMs: 5000, tracing });
  }
  return openSqlite(tempDir(cleanup), tracing);
}

export interface TestApp {
  app: App;
  store: Store;
  /** An injected request with the full-access token unless `token` says otherwise (null: none). */
  call(method: InjectOptions['method'], url: string, options?: CallOptions): Promise<LightMyRequestResponse>;
  /** A stored token with just these scopes. */
  tokenWith(...scopes: Scope[]): Promise<string>;
  /**
   * Runs `close` before the app closes, whichever cleanup comes first: a client that holds connections to it
   * (a browser keeps sockets open that carry no request, which the close waits for) is closed first, and the
   * close waits for none, rather than the grace period below.
   */
  beforeClose(close: () => unknown): void;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is when a string, as JSON otherwise. */
  token?: string | null;
  headers?: Record<string, string>;
}

/** How long a test app's close waits for its clients before it cuts their connections. */
const CLOSE_GRACE_MS = 5000;

/** The app in-process on a store of its own (a real SQLite file; see openTestStore), closed when the test file ends. */
export async function testApp(
  cleanup: typeof after,
  options: {
    store?: Store;
    bodyLimit?: number;
    config?: Partial<Config>;
    logger?: Parameters<typeof buildApp>[0]['logger'];
    metrics?: Parameters<typeof buildApp>[0]['metrics'];
    /** Traces the app's requests and its store's batches. */
    tracing?: Tracing;
    /** The DNS lookup of webhook URLs' hosts at registration (the system's when left out). */
    webhookResolver?: Resolver;
  } = {},
): Promise<TestApp> {
  const store = options.store ?? (await openTestStore(cleanup, options.tracing?.batches));
  const app = await buildApp({
    // No shedding for a lagging event loop unless a test asks: on a loaded machine (tests run two files at a
    // time beside other work) the loop of a test process can lag past 500 ms, and a 503 there is no bug.
    config: { overloadEventLoopDelayMs: 0, ...options.config, tokens: [TOKEN], bodyLimit: options.bodyLimit ?? 64 * 1024 },
    store,
    logger: options.logger,
    metrics: options.metrics,
    tracing: options.tracing,
    webhookResolver: options.webhookResolver,
  });
  await app.ready();
  const clients: Array<() => unknown> = [];
  cleanup(async () => {
    for (const close of clients) await close();
    // A test that failed half-way may leave a client connected that never reads (a stalled export, say),
    // which a graceful close would wait for forever: after a grace period, every connection is cut.
    const cut = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
    try {
      await app.close();
    } finally {
      clearTimeout(cut);
    }
    await store.close();
  });
  return {
    app,
    store,
    call(method, url, { body, token = TOKEN, headers = {} } = {}) {
      const all: Record<string, string> = { ...headers };
      if (token !== null) all.authorization ??= `Bearer ${token}`;
      if (body !== undefined) all['content-type'] ??= 'application/json';
      return app.inject({
        method,
        url,
        headers: all,
        payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
    async tokenWith(...scopes) {
      const { secret } = await createToken(store.tokens, `test-${Math.random().toString(36).slice(2)}`, scopes);
      return secret;
    },
    beforeClose(close) {
      clients.push(close);
    },
  };
}

/**
 * Asserts the one error shape: this status, `{"error": status, "message": …, "code": …, "field"?: …}` and
 * nothing else, as application/json, with a message that contains `mentions` (the field or parameter it
 * names), and this code when one is given.
 */
export function assertError(response: LightMyRequestResponse, status: number, mentions?: string | RegExp, code?: ErrorCode): string {
  assert.equal(response.statusCode, status, `expected ${status}, got ${response.statusCode}: ${response.payload}`);
  assert.match(String(response.headers['content-type']), /^application\/json\b/);
  const body = response.json<{ error: unknown; message: unknown; code?: unknown; field?: unknown }>();
  assertErrorShape(body, status, code);
  assert.equal(typeof body.message, 'string');
  const message = body.message as string;
  if (typeof mentions === 'string') assert.ok(message.includes(mentions), `message "${message}" should mention "${mentions}"`);
  else if (mentions) assert.match(message, mentions);
  return message;
}
