import type { Migration } from '../migration.js';

/**
 * The PostgreSQL schema's migrations from version 6 on (the list is one, in migrations.ts, which checks it
 * whole): apart only so that neither file outgrows a screenful of history. Never edit one that has shipped.
 */
export const POSTGRES_MIGRATIONS_SINCE_6: Migration[] = [
  {
    version: 6,
    name: 'webhook_trace_context',
    sql: `
-- With tracing on, the W3C traceparent of the request whose write queued the message: its deliveries
-- continue that trace. NULL when tracing was off (or for bulk imports).
ALTER TABLE webhook_messages ADD COLUMN traceparent text;
`,
  },
  {
    version: 7,
    name: 'change_feed',
    sql: `
-- The change feed (GET /events): one row per plant change, written in the transaction of the change
-- whether or not a webhook endpoint subscribes. Transactions of several instances commit in any order,
-- so an event's place in the feed is not known when it is inserted: its transaction's events share a key
-- (event_txn: unique for good, unlike transaction ids, which start again in a restored cluster), and the
-- transaction ends by taking the next number of event_commit_order under a transaction-level advisory
-- lock, held until it commits (postgres/feed.ts), written in event_commits. Numbers are thereby handed
-- out in commit order, and a reader that sees commit n sees every commit before it. The feed's order is
-- (event_commits.csn, events.ord).
CREATE SEQUENCE event_txn CACHE 100;
CREATE SEQUENCE event_commit_order;
CREATE TABLE event_commits (
  csn bigint PRIMARY KEY,          -- the commit's place in the feed
  key bigint NOT NULL UNIQUE,      -- the key of its events
  at  bigint NOT NULL              -- when it committed, epoch ms (retention)
);
CREATE TABLE events (
  key  bigint NOT NULL,            -- its transaction's (event_commits.key)
  ord  integer NOT NULL,           -- its place among that transaction's events, from 1
  id   text COLLATE "C" NOT NULL UNIQUE,  -- the webhook-id (msg_<ulid>) its webhook messages carry too
  type text NOT NULL,
  body text NOT NULL,              -- the webhook body, {"type":…,"timestamp":…,"data":…}
  PRIMARY KEY (key, ord)
);
-- Reading the feed takes the new scope events:read; a token that had every scope before has every scope still.
UPDATE tokens SET scopes = scopes || ' events:read'
 WHERE ' ' || scopes || ' ' LIKE '% plants:read %' AND ' ' || scopes || ' ' LIKE '% plants:write %'
   AND ' ' || scopes || ' ' LIKE '% webhooks:manage %' AND ' ' || scopes || ' ' NOT LIKE '% events:read %';
`,
  },
  {
    version: 8,
    name: 'idempotency_keys',
    sql: `
-- The answers of POSTs sent with an Idempotency-Key, each written in the transaction of the POST's own
-- write, so that a retry with the key, on any instance, gets the answer again instead of the write being
-- made twice. A write claims its key by inserting the row first: the primary key makes a second claim of
-- the same key, from any instance, wait for the first transaction and then find its answer.
CREATE TABLE idempotency_keys (
  owner       text NOT NULL,     -- the token's id, or jwt:<iss>:<sub>: keys of different owners never meet
  key         text NOT NULL,
  fingerprint text NOT NULL,     -- of the request (method, path, body…): a retry must be the same request
  status      integer NOT NULL,
  headers     text NOT NULL,     -- the headers that matter, as a JSON object
  body        text NOT NULL,
  expires_at  bigint NOT NULL,   -- epoch ms, by the database's clock: IDEMPOTENCY_KEY_TTL after the commit
  PRIMARY KEY (owner, key)
);
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
-- were ({"status":…,"headers":{…},"body":"…"}), and are replayed as kept. The outcome is NULL only in
-- the transaction that claimed the key, until it keeps it there; nobody else sees that.
ALTER TABLE idempotency_keys
  ADD COLUMN kind text,     -- the write: put, import, createEndpoint, rotateSecret, replay (or answer)
  ADD COLUMN outcome text;  -- what it did, as JSON
UPDATE idempotency_keys SET kind = 'answer', outcome = json_build_object('status', status, 'headers', headers::json, 'body', body)::text;
ALTER TABLE idempotency_keys DROP COLUMN status, DROP COLUMN headers, DROP COLUMN body, ALTER COLUMN kind SET NOT NULL;
`,
  },
  {
    version: 10,
    name: 'instances',
    sql: `
-- Every process that has the store open (a server, each of its workers, a CLI command while it runs) keeps
-- a row here, seen every few seconds (postgres/instances.ts): the release it runs and the newest migration
-- its code knows. A contracting migration waits until no process seen lately knows fewer than it. A table
-- the release before never reads: adding it leaves that release working beside this one.
CREATE TABLE instances (
  id         text PRIMARY KEY,    -- <host>:<pid>:<random>, one per process and store
  host       text NOT NULL,
  pid        integer NOT NULL,
  release    text NOT NULL,       -- the package's version
  schema     integer NOT NULL,    -- the newest migration its code knows
  started_at bigint NOT NULL,     -- epoch ms, by the database's clock
  seen_at    bigint NOT NULL
);
`,
  },
  {
    version: 11,
    name: 'webhook_int64_strings',
    sql: `
-- An endpoint may ask for its delivery bodies with int64 values as JSON strings ("int64": "string"):
-- true then, false (JSON integers, as before) for every endpoint until asked. A column the release before
-- never reads, defaulted for its inserts, which name their columns: it keeps working beside this one. A
-- constant default: the table is not rewritten.
ALTER TABLE webhook_endpoints ADD COLUMN int64_strings boolean NOT NULL DEFAULT false;
`,
  },
  {
    version: 12,
    name: 'plant_fold_dotless_i',
    sql: `
SET LOCAL lock_timeout = '10s';
-- plant_fold kept ı apart from i by standing the noncharacter U+FDD0 in for it while folding, then turning
-- every U+FDD0 back into ı: a name holding U+FDD0 itself folded as though it held ı (q=ı found it, and
-- q=U+FDD0 found the names with ı). ı is now kept apart as model/fold.ts keeps it: the text between the ı
-- folded, the ı left as they are. The same fold for every other name, so the release before, which calls
-- this function through its triggers and searches, works beside this one unchanged.
CREATE OR REPLACE FUNCTION plant_fold(name text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
  SELECT translate(
    CASE WHEN strpos(name, 'ı') = 0 THEN lower(upper(lower(upper(name COLLATE "und-x-icu"))))
    ELSE array_to_string(ARRAY(
      SELECT lower(upper(lower(upper(part COLLATE "und-x-icu")))) FROM unnest(string_to_array(name, 'ı')) WITH ORDINALITY AS t(part, n) ORDER BY n
    ), 'ı') END,
    'ς', 'σ')
$fn$;
-- The names the old fold got wrong, folded again (a name without U+FDD0 folds as it did).
UPDATE plants SET name_fold = plant_fold(name) WHERE strpos(name, U&'\\FDD0') > 0;
`,
  },
];
