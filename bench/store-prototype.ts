import { answer, fail, servePlantPosts } from './bare-http.js';
import { openStore } from '../src/store/open.js';

/**
 * The store prototype: node:http in front of the service's own store (openStore: its migrations, its group
 * commit, its writer thread on SQLite, the same event, version and index writes), and nothing else. It
 * reads the body, JSON.parse, checks the bearer header and the field types as the durable prototype does,
 * and answers each POST /plants when the store has its put (create or replace, as the service's POST
 * without conditions). No framework, no validation schema, no headers beyond content-type, no log line,
 * no idempotency, no webhooks. So the service's share of it is what Fastify and the HTTP features cost
 * over the service's own durable work, and its share of the prototypes is what that work and the store's
 * design cost beyond theirs. On PostgreSQL, where the shared equal-work anchor (SQLite only) does not run,
 * it is the one measure of the service's overhead over its own durable work.
 * Usage: DATABASE_URL=file:… or postgres://… node dist/bench/store-prototype.js
 */

// The service's defaults (src/config/store.ts).
const store = await openStore({
  databaseUrl: process.env.DATABASE_URL ?? '',
  sqliteSynchronous: 'FULL',
  dbTimeoutMs: 5000,
  pgPoolSize: 10,
  pgReadPoolSize: 3,
  writeQueueLimit: 10_000,
});

servePlantPosts(
  'store prototype',
  ({ id, name, tag }, res) => {
    store.plants.put(tag === undefined ? { id, name } : { id, name, tag }).then(
      (result) =>
        result.outcome === 'created' || result.outcome === 'replaced'
          ? answer(res, 200, JSON.stringify({ name, tag }))
          : fail(res, 409, `not stored: ${result.outcome}`),
      (error: unknown) => {
        process.stderr.write(`store prototype: put failed: ${String(error)}\n`);
        fail(res, 503, 'the store is unavailable');
      },
    );
  },
  () => store.close(),
);
