import { checked, type Migration } from './migration.js';

/** The SQLite schema, version by version. Never edit a migration that has shipped: add the next one. */
export const SQLITE_MIGRATIONS: Migration[] = checked('sqlite', [
  {
    version: 1,
    name: 'plants_and_tokens',
    sql: `
-- Plants keyed by their 64-bit id (an INTEGER PRIMARY KEY is SQLite's rowid: ordered, no extra index).
CREATE TABLE plants (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  tag  TEXT
);
-- Keyset paging filtered by tag: WHERE tag = ? AND id > ? ORDER BY id.
CREATE INDEX plants_tag_id ON plants (tag, id);

-- Bearer tokens, stored by the SHA-256 hash of the secret, never the secret.
CREATE TABLE tokens (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  hash       BLOB NOT NULL UNIQUE,
  scopes     TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE UNIQUE INDEX tokens_active_name ON tokens (name) WHERE revoked_at IS NULL;
`,
  },
]);
