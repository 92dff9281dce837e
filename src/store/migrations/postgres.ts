import { checked, type Migration } from './migration.js';

/** The PostgreSQL schema, version by version. Never edit a migration that has shipped: add the next one. */
export const POSTGRES_MIGRATIONS: Migration[] = checked('postgres', [
  {
    version: 1,
    name: 'plants_and_tokens',
    sql: `
-- Plants keyed by their 64-bit id.
CREATE TABLE plants (
  id   bigint PRIMARY KEY,
  name text NOT NULL,
  tag  text
);
-- Keyset paging filtered by tag: WHERE tag = $1 AND id > $2 ORDER BY id.
CREATE INDEX plants_tag_id ON plants (tag, id);

-- Bearer tokens, stored by the SHA-256 hash of the secret, never the secret.
CREATE TABLE tokens (
  id         text PRIMARY KEY,
  name       text NOT NULL,
  hash       bytea NOT NULL UNIQUE,
  scopes     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE UNIQUE INDEX tokens_active_name ON tokens (name) WHERE revoked_at IS NULL;
`,
  },
  {
    version: 2,
    name: 'rate_limits',
    sql: `
-- Request counts per rate-limit key and one-minute window, shared by every instance. UNLOGGED: the
-- counts are worth nothing after a crash and need no write-ahead log.
CREATE UNLOGGED TABLE rate_limits (
  key          text    NOT NULL,
  window_start bigint  NOT NULL,
  count        integer NOT NULL,
  PRIMARY KEY (key, window_start)
);
`,
  },
]);
