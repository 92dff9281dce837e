import { checked, type Migration } from '../migration.js';
import { POSTGRES_MIGRATIONS_SINCE_6 } from './migrations-since-6.js';

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
  {
    version: 3,
    name: 'webhooks',
    sql: `
-- Webhook endpoints. The secret is kept as is: deliveries are signed with it (HMAC), so it cannot be hashed.
CREATE TABLE webhook_endpoints (
  id                    text PRIMARY KEY,  -- ep_<ulid>: ordered by creation
  url                   text NOT NULL,
  events                text[] NOT NULL,
  description           text,
  enabled               boolean NOT NULL,
  disabled_reason       text,
  secret                text NOT NULL,
  previous_secret       text,              -- also signs deliveries until previous_secret_until
  previous_secret_until bigint,            -- epoch ms
  created_at            bigint NOT NULL,   -- epoch ms
  failing_since         bigint             -- first failed delivery since the last success, epoch ms
);

-- The outbox: one message per event and endpoint, written in the transaction of the change it announces.
CREATE TABLE webhook_messages (
  seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id     text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id        text COLLATE "C" NOT NULL,
  type            text NOT NULL,
  payload         text NOT NULL,
  occurred_at     bigint NOT NULL,
  status          text NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  round_attempts  integer NOT NULL DEFAULT 0,
  next_attempt_at bigint,
  last_attempt_at bigint,
  last_status     integer,
  last_error      text,
  lease_until     bigint,
  -- An endpoint's deliveries log, newest first, and its keyset cursor.
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_messages_due ON webhook_messages (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_messages_expiry ON webhook_messages (last_attempt_at) WHERE status <> 'pending';
`,
  },
  {
    version: 4,
    name: 'plant_versions',
    sql: `
-- Every write to a plant gives it a new version (its ETag) from one sequence, never reused, so that a
-- plant deleted and created again can never match an ETag of its earlier life. Plants from before start at 0.
ALTER TABLE plants ADD COLUMN version bigint NOT NULL DEFAULT 0;
CREATE SEQUENCE plant_version;

-- A webhook-id made by the database (bulk imports announce their plants from SQL): msg_ and a ULID, 48
-- bits of milliseconds then 80 random bits in Crockford base32, as src/model/ids.ts makes them.
CREATE FUNCTION plant_store_event_id() RETURNS text LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  -- Unique, not secret: random() is enough, and needs no extension (gen_random_uuid is PostgreSQL 13+).
  random bytea := decode(md5(random()::text || clock_timestamp()::text), 'hex');
  id text := '';
  bits bigint := 0;
  count int := 0;
BEGIN
  FOR i IN 1..10 LOOP
    id := substr(alphabet, (ms % 32)::int + 1, 1) || id;
    ms := ms / 32;
  END LOOP;
  FOR i IN 0..9 LOOP
    bits := (bits << 8) | get_byte(random, i);
    count := count + 8;
    WHILE count >= 5 LOOP
      count := count - 5;
      id := id || substr(alphabet, ((bits >> count) & 31)::int + 1, 1);
    END LOOP;
    bits := bits & ((1 << count) - 1);
  END LOOP;
  RETURN 'msg_' || id;
END
$fn$;
`,
  },
  {
    version: 5,
    name: 'plant_search',
    // Written to be run again whole (IF NOT EXISTS, OR REPLACE): see `steps` in store/migration.ts.
    sql: `
-- Waits at most this long for the table lock the column and the triggers need (an export's long read
-- holds a lock that conflicts): rather fail the start, to be tried again, than stall every query behind it.
SET LOCAL lock_timeout = '10s';

-- Unicode case folding, as model/fold.ts does it (upper then lower, twice, by the ICU root locale; ς as
-- σ; ı kept apart, through the noncharacter U+FDD0), for GET /plants?q=.
DO $check$ BEGIN
  IF current_setting('server_encoding') <> 'UTF8' THEN
    RAISE EXCEPTION 'the database must be UTF8-encoded (it is %): plant names are Unicode text, searched under Unicode case folding (create it with ENCODING ''UTF8'')', current_setting('server_encoding');
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') THEN
    RAISE EXCEPTION 'searching plants by name needs PostgreSQL built with ICU (the collation "und-x-icu"), for Unicode case folding';
  END IF;
END $check$;
CREATE OR REPLACE FUNCTION plant_fold(name text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
  SELECT translate(lower(upper(lower(upper(replace(name, 'ı', U&'\\FDD0') COLLATE "und-x-icu")))), 'ς' || U&'\\FDD0', 'σı')
$fn$;

-- The folded name, kept by triggers whoever writes the row (this service's instances, old ones during a
-- rolling upgrade, an import's INSERT … SELECT), filled for the plants already there by the steps below.
ALTER TABLE plants ADD COLUMN IF NOT EXISTS name_fold text;
CREATE OR REPLACE FUNCTION plants_fold_name() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  NEW.name_fold := plant_fold(NEW.name);
  RETURN NEW;
END
$fn$;
DROP TRIGGER IF EXISTS plants_fold_name_insert ON plants;
CREATE TRIGGER plants_fold_name_insert BEFORE INSERT ON plants FOR EACH ROW EXECUTE FUNCTION plants_fold_name();
DROP TRIGGER IF EXISTS plants_fold_name_update ON plants;
CREATE TRIGGER plants_fold_name_update BEFORE UPDATE OF name ON plants
  FOR EACH ROW WHEN (NEW.name IS DISTINCT FROM OLD.name) EXECUTE FUNCTION plants_fold_name();

-- Fills name_fold 10,000 plants per transaction, so that no row stays locked for long.
CREATE OR REPLACE PROCEDURE plants_fold_names() LANGUAGE plpgsql AS $fn$
DECLARE
  done_upto bigint;
  upto bigint;
BEGIN
  LOOP
    SELECT max(id) INTO upto FROM (SELECT id FROM plants WHERE done_upto IS NULL OR id > done_upto ORDER BY id LIMIT 10000) batch;
    EXIT WHEN upto IS NULL;
    UPDATE plants SET name_fold = plant_fold(name) WHERE (done_upto IS NULL OR id > done_upto) AND id <= upto AND name_fold IS NULL;
    COMMIT;
    done_upto := upto;
  END LOOP;
END
$fn$;

-- The trigram index of substring search needs pg_trgm. Without the privilege to create it (or without
-- the contrib package), q scans name_fold instead; the service says so at every start (README).
DO $trgm$ BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported THEN
  RAISE NOTICE 'pg_trgm cannot be created (%): searches by name will scan the plants', SQLERRM;
END $trgm$;
`,
    // Outside any transaction: no step holds writes for longer than a batch of the fill. Each index is
    // dropped first in case an interrupted run left it half made (INVALID).
    steps: [
      { sql: 'CALL plants_fold_names()' },
      { sql: 'DROP PROCEDURE plants_fold_names()' },
      // Name order (ties broken by id; COLLATE "C": by code point, whatever the database's collation),
      // alone and within tags, every page by keyset: WHERE (name COLLATE "C", id) > ($1, $2) ORDER BY ….
      // The other columns are included so that a page, and q walked along the order (name_fold LIKE), is
      // read from the index alone: fetching every plant walked past made such a page several times
      // slower (measured in bench/RESULTS.md).
      { sql: 'DROP INDEX CONCURRENTLY IF EXISTS plants_name_id' },
      { sql: 'CREATE INDEX CONCURRENTLY plants_name_id ON plants (name COLLATE "C", id) INCLUDE (name_fold, tag)' },
      { sql: 'DROP INDEX CONCURRENTLY IF EXISTS plants_tag_name_id' },
      { sql: 'CREATE INDEX CONCURRENTLY plants_tag_name_id ON plants (tag, name COLLATE "C", id) INCLUDE (name_fold)' },
      // Substring search: name_fold LIKE '%…%' through the trigrams of the folded names.
      { sql: 'DROP INDEX CONCURRENTLY IF EXISTS plants_name_fold_trgm' },
      {
        sql: 'CREATE INDEX CONCURRENTLY plants_name_fold_trgm ON plants USING gin (name_fold gin_trgm_ops)',
        when: "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')",
      },
      // Statistics of the new column, for the planner's choice between the trigram index and an order's index.
      { sql: 'ANALYZE plants' },
    ],
  },
  ...POSTGRES_MIGRATIONS_SINCE_6,
]);
