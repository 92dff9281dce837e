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
]);
