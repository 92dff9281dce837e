import { checked, type Migration } from '../migration.js';

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
  {
    version: 2,
    name: 'webhooks',
    sql: `
-- Webhook endpoints. The secret is kept as is: deliveries are signed with it (HMAC), so it cannot be hashed.
CREATE TABLE webhook_endpoints (
  id                    TEXT PRIMARY KEY,  -- ep_<ulid>: ordered by creation
  url                   TEXT NOT NULL,
  events                TEXT NOT NULL,     -- event types, space-separated
  description           TEXT,
  enabled               INTEGER NOT NULL,  -- 0 or 1
  disabled_reason       TEXT,
  secret                TEXT NOT NULL,
  previous_secret       TEXT,              -- also signs deliveries until previous_secret_until
  previous_secret_until INTEGER,           -- epoch ms
  created_at            INTEGER NOT NULL,  -- epoch ms
  failing_since         INTEGER            -- first failed delivery since the last success, epoch ms
);

-- The outbox: one message per event and endpoint, written in the transaction of the change it announces.
CREATE TABLE webhook_messages (
  seq             INTEGER PRIMARY KEY,
  endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id        TEXT NOT NULL,           -- the webhook-id (msg_<ulid>), the same for every endpoint; in time order
  type            TEXT NOT NULL,
  payload         TEXT NOT NULL,           -- the exact body sent, on every attempt
  occurred_at     INTEGER NOT NULL,        -- when the change committed, epoch ms
  status          TEXT NOT NULL,           -- pending, delivered or failed
  attempts        INTEGER NOT NULL DEFAULT 0,
  round_attempts  INTEGER NOT NULL DEFAULT 0, -- attempts since queued or replayed: the place in the retry schedule
  next_attempt_at INTEGER,                 -- epoch ms, while pending
  last_attempt_at INTEGER,
  last_status     INTEGER,
  last_error      TEXT,
  lease_until     INTEGER,                 -- claimed by a dispatcher until then, epoch ms
  -- An endpoint's deliveries log, newest first, and its keyset cursor.
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_messages_due ON webhook_messages (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_messages_expiry ON webhook_messages (last_attempt_at) WHERE status <> 'pending';
`,
  },
  {
    version: 3,
    name: 'plant_versions',
    sql: `
-- Every write to a plant gives it a new version (its ETag): a counter, never reused, so that a plant
-- deleted and created again can never match an ETag of its earlier life. Plants from before start at 0.
ALTER TABLE plants ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO counters (name, value) VALUES ('plant_version', 0);
`,
  },
  {
    version: 4,
    name: 'change_feed',
    sql: `
-- The change feed (GET /events): one row per plant change, written in the transaction of the change
-- whether or not a webhook endpoint subscribes. SQLite has one writer at a time, so the order in which
-- rows are inserted is the order in which they commit: position is the feed's order. Retention always
-- keeps the newest row, so a position is never handed out twice.
CREATE TABLE events (
  position INTEGER PRIMARY KEY,
  id       TEXT NOT NULL UNIQUE,  -- the webhook-id (msg_<ulid>) its webhook messages carry too
  type     TEXT NOT NULL,
  at       INTEGER NOT NULL,      -- when the change committed, epoch ms (retention)
  body     TEXT NOT NULL          -- the webhook body, {"type":…,"timestamp":…,"data":…}
);
-- Reading the feed takes the new scope events:read; a token that had every scope before has every scope still.
UPDATE tokens SET scopes = scopes || ' events:read'
 WHERE ' ' || scopes || ' ' LIKE '% plants:read %' AND ' ' || scopes || ' ' LIKE '% plants:write %'
   AND ' ' || scopes || ' ' LIKE '% webhooks:manage %' AND ' ' || scopes || ' ' NOT LIKE '% events:read %';
`,
  },
]);
