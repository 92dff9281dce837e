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
    name: 'plant_search',
    sql: `
-- Finding plants (GET /plants?q=&tag=&sort=). name_fold is the name under Unicode case folding, written
-- with every name by plant_fold(), a function the service defines on each of its connections
-- (model/fold.ts); q is folded alike and found as a plain substring of it.
ALTER TABLE plants ADD COLUMN name_fold TEXT;
UPDATE plants SET name_fold = plant_fold(name);

-- Name order (ties broken by id; BINARY: by code point), alone and within tags, every page by keyset:
-- WHERE (name, id) > (?, ?) ORDER BY name, id; and WHERE tag = ? AND (name, id) > (?, ?) ORDER BY name, id.
-- Every index entry ends with the rowid, which is the id. name_fold, a function of name, changes nothing
-- in the order (the queries sort by name, name_fold, id): it is there for q, checked in the index.
CREATE INDEX plants_name_id ON plants (name, name_fold);
CREATE INDEX plants_tag_name_id ON plants (tag, name, name_fold);

-- Substring search: an FTS5 index of the folded names' trigrams (a q of 3 characters or more; shorter
-- ones scan name_fold). Contentless (the text is in plants already) with deletes by rowid; kept by the
-- triggers below, so every way a plant is written keeps it, in the write's own transaction.
CREATE VIRTUAL TABLE plants_search USING fts5 (name_fold, content = '', contentless_delete = 1, tokenize = 'trigram case_sensitive 1');
INSERT INTO plants_search (rowid, name_fold) SELECT id, name_fold FROM plants;
CREATE TRIGGER plants_search_insert AFTER INSERT ON plants BEGIN
  INSERT INTO plants_search (rowid, name_fold) VALUES (new.id, new.name_fold);
END;
CREATE TRIGGER plants_search_update AFTER UPDATE OF name_fold ON plants WHEN old.name_fold IS NOT new.name_fold BEGIN
  DELETE FROM plants_search WHERE rowid = old.id;
  INSERT INTO plants_search (rowid, name_fold) VALUES (new.id, new.name_fold);
END;
CREATE TRIGGER plants_search_delete AFTER DELETE ON plants BEGIN
  DELETE FROM plants_search WHERE rowid = old.id;
END;
`,
  },
  {
    version: 5,
    name: 'webhook_trace_context',
    sql: `
-- With tracing on, the W3C traceparent of the request whose write queued the message: its deliveries
-- continue that trace. NULL when tracing was off (or for bulk imports).
ALTER TABLE webhook_messages ADD COLUMN traceparent TEXT;
`,
  },
  {
    version: 6,
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
  {
    version: 7,
    name: 'search_index_derived',
    sql: `
-- The trigram index of names is derived data: it leaves the writes' transactions (its triggers) and is
-- brought up to date after them, in large batches, by the writer thread (writer/search-index.ts), which
-- records how far it has got in the change feed: search_position, the position of the last event whose
-- plant is indexed. A search reads the index for the plants indexed up to there and the plants the feed
-- names after it, and checks every name, so that it never lags (list-sql.ts). The index is current now.
DROP TRIGGER plants_search_insert;
DROP TRIGGER plants_search_update;
DROP TRIGGER plants_search_delete;
INSERT INTO counters (name, value) VALUES ('search_position', (SELECT coalesce(max(position), 0) FROM events));
`,
  },
  {
    version: 8,
    name: 'idempotency_keys',
    sql: `
-- The answers of POSTs sent with an Idempotency-Key, each written in the transaction of the POST's own
-- write, so that a retry with the key gets the answer again instead of the write being made twice.
CREATE TABLE idempotency_keys (
  owner       TEXT NOT NULL,     -- the token's id, or jwt:<iss>:<sub>: keys of different owners never meet
  key         TEXT NOT NULL,
  fingerprint TEXT NOT NULL,     -- of the request (method, path, body…): a retry must be the same request
  status      INTEGER NOT NULL,
  headers     TEXT NOT NULL,     -- the headers that matter, as a JSON object
  body        TEXT NOT NULL,
  expires_at  INTEGER NOT NULL,  -- epoch ms: IDEMPOTENCY_KEY_TTL after the commit
  PRIMARY KEY (owner, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
`,
  },
  {
    version: 9,
    name: 'idempotency_outcomes',
    sql: `
-- A key keeps the write's outcome (what it did, as JSON: store/idempotency.ts) instead of its HTTP answer:
-- each route renders its answer from the outcome, the first time and on every replay. The answers kept
-- by the release before stay, until they expire, as outcomes of the kind 'answer' holding them as they
-- were ({"status":…,"headers":{…},"body":"…"}), and are replayed as kept. How many rows the table holds
-- is counted in counters as the writer thread keeps and sweeps them (a gauge reads it).
CREATE TABLE idempotency_outcomes (
  owner       TEXT NOT NULL,     -- the token's id, or jwt:<iss>:<sub>: keys of different owners never meet
  key         TEXT NOT NULL,
  fingerprint TEXT NOT NULL,     -- of the request (method, path, body…): a retry must be the same request
  kind        TEXT NOT NULL,     -- the write: put, import, createEndpoint, rotateSecret, replay (or answer)
  outcome     TEXT NOT NULL,     -- what it did, as JSON
  expires_at  INTEGER NOT NULL,  -- epoch ms: IDEMPOTENCY_KEY_TTL after the commit
  PRIMARY KEY (owner, key)
) WITHOUT ROWID;
INSERT INTO idempotency_outcomes (owner, key, fingerprint, kind, outcome, expires_at)
  SELECT owner, key, fingerprint, 'answer', json_object('status', status, 'headers', json(headers), 'body', body), expires_at
  FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_outcomes RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
INSERT INTO counters (name, value) VALUES ('idempotency_keys', (SELECT count(*) FROM idempotency_keys));
`,
  },
  {
    version: 10,
    name: 'webhook_int64_strings',
    sql: `
-- An endpoint may ask for its delivery bodies with int64 values as JSON strings ("int64": "string"):
-- 1 then, 0 (JSON integers, as before) for every endpoint until asked. A column the release before never
-- reads, defaulted for its inserts, which name their columns: it keeps working beside this one.
ALTER TABLE webhook_endpoints ADD COLUMN int64_strings INTEGER NOT NULL DEFAULT 0;
`,
  },
]);
