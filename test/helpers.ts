import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { after } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/app.js';
import { createToken } from '../src/auth/tokens.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { Scope, Store } from '../src/store/store.js';

/** The static full-access token every test app accepts. */
export const TOKEN = 'test-token-full-access';

/** A fresh directory under the system temp dir, removed when the test file ends. */
export function tempDir(cleanup: typeof after): string {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-test-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function openSqlite(dir: string): SqliteStore {
  return SqliteStore.open(`file:${join(dir, 'plants.db')}`, { synchronous: 'FULL', busyTimeoutMs: 5000 });
}

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  /** An injected request with the full-access token unless `token` says otherwise (null: none). */
  call(method: InjectOptions['method'], url: string, options?: CallOptions): Promise<LightMyRequestResponse>;
  /** A stored token with just these scopes. */
  tokenWith(...scopes: Scope[]): Promise<string>;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is when a string, as JSON otherwise. */
  token?: string | null;
  headers?: Record<string, string>;
}

/** The app in-process on a real SQLite file of its own, closed when the test file ends. */
export async function testApp(cleanup: typeof after, options: { store?: Store; bodyLimit?: number } = {}): Promise<TestApp> {
  const store = options.store ?? openSqlite(tempDir(cleanup));
  const app = await buildApp({ config: { tokens: [TOKEN], bodyLimit: options.bodyLimit ?? 64 * 1024 }, store });
  await app.ready();
  cleanup(async () => {
    await app.close();
    await store.close();
  });
  return {
    app,
    store,
    call(method, url, { body, token = TOKEN, headers = {} } = {}) {
      const all: Record<string, string> = { ...headers };
      if (token !== null) all.authorization ??= `Bearer ${token}`;
      if (body !== undefined) all['content-type'] ??= 'application/json';
      return app.inject({ method, url, headers: all, payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    },
    async tokenWith(...scopes) {
      const { secret } = await createToken(store.tokens, `test-${Math.random().toString(36).slice(2)}`, scopes);
      return secret;
    },
  };
}
