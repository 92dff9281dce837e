-- Request counts per rate-limit key and one-minute window, shared by every instance. UNLOGGED: the
-- counts are worth nothing after a crash and need no write-ahead log.
CREATE UNLOGGED TABLE rate_limits (
  key          text    NOT NULL,
  window_start bigint  NOT NULL,
  count        integer NOT NULL,
  PRIMARY KEY (key, window_start)
);
