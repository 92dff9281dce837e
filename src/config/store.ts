import { Type } from '@sinclair/typebox';
import { databaseKind, redactUrl } from '../store/database-url.js';
import { parsePostgresUrl, type SessionAttrs } from '../store/postgres/hosts/url.js';
import { int, oneOf, type Setting } from './setting.js';

/** The store's settings: where the plants are kept, and how the service talks to the database. */

/** A postgres:// URL pg can be given host by host, whose target_session_attrs (if any) is one of `allowed`. */
function checkPostgresUrl(text: string, allowed: readonly SessionAttrs[], why: string): void {
  const { sessionAttrs } = parsePostgresUrl(text);
  if (sessionAttrs !== undefined && !allowed.includes(sessionAttrs)) throw new Error(`target_session_attrs=${sessionAttrs} will not do: ${why}`);
}

export const STORE_SETTINGS = {
  databaseUrl: {
    env: 'DATABASE_URL',
    schema: Type.String({
      default: 'file:./data/plant-store.db',
      description:
        '`file:/path/to.db` (SQLite, created with its directory on first start) or `postgres://…`, with several hosts for failover: `postgres://u:p@h1:5432,h2:5432/plants?target_session_attrs=read-write` (see [High availability](high-availability.md))',
    }),
    parse: (text: string) => {
      // SQLite trims the file name and the service's own file code did not: `x.db ` opened x.db, while a
      // restore replaced (and the mode check looked at) an empty `x.db `, so a restore did nothing.
      if (text !== text.trim()) throw new Error(`must not begin or end with spaces, got "${redactUrl(text)}"`);
      const kind = databaseKind(text);
      if (kind === undefined) throw new Error(`must be file:/path/to.db or postgres://user:password@host/db, got "${redactUrl(text)}"`);
      // A query or fragment in a file: URL named no option: `file:/x/y.db?mode=ro` made a writable store named "y.db?mode=ro".
      if (kind === 'sqlite' && /[?#]/.test(text))
        throw new Error(`a file: URL takes no query or fragment (?…, #…): name the file alone, got "${text}"`);
      if (kind === 'postgres')
        checkPostgresUrl(text, ['read-write', 'primary', 'any'], 'the service writes: use read-write or primary (replicas go in DATABASE_READ_URL)');
      return text;
    },
  },
  databaseReadUrl: {
    env: 'DATABASE_READ_URL',
    schema: Type.String({
      default: '',
      description:
        'PostgreSQL replicas (`postgres://…`, one host or several) that plant lists and exports read from while one is up and at most `READ_REPLICA_MAX_LAG_MS` behind; otherwise they read from the primary',
    }),
    parse: (text: string) => {
      if (databaseKind(text) !== 'postgres')
        throw new Error(`must be postgres://user:password@host/db (one host or several), got "${redactUrl(text)}"`);
      checkPostgresUrl(text, ['any', 'standby', 'read-only', 'primary', 'read-write'], '');
      return text;
    },
    docDefault: 'off',
  },
  readReplicaMaxLagMs: {
    env: 'READ_REPLICA_MAX_LAG_MS',
    schema: int(0, 3_600_000, 5000, 'A replica further behind the primary than this is skipped (lists may be behind by this much)'),
  },
  sqliteSynchronous: {
    env: 'SQLITE_SYNCHRONOUS',
    schema: oneOf(['FULL', 'NORMAL'] as const, 'FULL', '`NORMAL` is faster but a power loss may undo the last commits (never corrupts)'),
    parse: (text: string) => text.toUpperCase(),
  },
  dbTimeoutMs: { env: 'DB_TIMEOUT_MS', schema: int(100, 600_000, 5000, 'Longest a request waits for the database before a 503') },
  writeQueueLimit: {
    env: 'WRITE_QUEUE_LIMIT',
    schema: int(1, 10_000_000, 10_000, 'Writes waiting for the database at most; beyond, a write is answered 503 with `Retry-After` at once'),
  },
  pgPoolSize: {
    env: 'PG_POOL_SIZE',
    schema: int(1, 1000, 10, 'Connections per process to PostgreSQL for writes and everything else (`PG_READ_POOL_SIZE` more for reads)'),
  },
  pgReadPoolSize: {
    env: 'PG_READ_POOL_SIZE',
    schema: int(
      0,
      1000,
      3,
      'Connections per process to the PostgreSQL primary kept for reads (a plant by id, lists, counts, token look-ups), beside `PG_POOL_SIZE`, so that reads never wait behind writes; `0`: reads share the `PG_POOL_SIZE` connections',
    ),
    // A quarter of the main pool, at least 2: the reads by id alone keep 2 statements in flight.
    defaultFrom: (earlier: Readonly<Record<string, unknown>>) => Math.max(2, Math.ceil(Number(earlier.pgPoolSize) / 4)),
    docDefault: 'a quarter of `PG_POOL_SIZE`, at least 2 (3)',
  },
} satisfies Record<string, Setting>;
