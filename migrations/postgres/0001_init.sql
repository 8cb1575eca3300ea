-- assistant-bridge on PostgreSQL: the same data as SQLite after its migrations 0001-0004, for
-- several replicas sharing one database. Times are epoch milliseconds (BIGINT), as in SQLite.
-- Applied by src/store/pg/migrate.ts under an advisory lock, recorded in schema_migrations.

CREATE TABLE conversations (
  place_key     TEXT    PRIMARY KEY,         -- placeKey(place): platform:workspace:channel:thread
  platform      TEXT    NOT NULL,
  workspace_id  TEXT,
  channel_id    TEXT    NOT NULL,
  thread_id     TEXT,
  bot_id        TEXT    NOT NULL,
  form          TEXT    NOT NULL,            -- the chat service's flavor
  upstream_id   TEXT,                        -- NULL while the upstream has not named it yet
  created_at    BIGINT  NOT NULL,
  last_used_at  BIGINT  NOT NULL
);

CREATE TABLE processed_events (
  platform  TEXT    NOT NULL,
  event_id  TEXT    NOT NULL,
  seen_at   BIGINT  NOT NULL,
  PRIMARY KEY (platform, event_id)
);
CREATE INDEX processed_events_seen_at ON processed_events (seen_at);

CREATE TABLE replies_in_flight (
  id           BIGSERIAL PRIMARY KEY,
  platform     TEXT    NOT NULL,
  event_id     TEXT    NOT NULL,
  target       TEXT    NOT NULL,             -- JSON ReplyTarget
  message_ids  TEXT    NOT NULL DEFAULT '[]',
  last_text    TEXT    NOT NULL DEFAULT '',
  upstream_id  TEXT,
  state        TEXT    NOT NULL DEFAULT 'streaming'
               CHECK (state IN ('streaming', 'done', 'interrupted', 'failed')),
  owner        TEXT    NOT NULL DEFAULT '',  -- the replica streaming it
  started_at   BIGINT  NOT NULL,
  updated_at   BIGINT  NOT NULL
);
CREATE INDEX replies_in_flight_state ON replies_in_flight (state, updated_at);
CREATE INDEX replies_in_flight_owner ON replies_in_flight (owner, state);

CREATE TABLE slack_installations (
  team_id        TEXT    NOT NULL DEFAULT '',
  enterprise_id  TEXT    NOT NULL DEFAULT '',
  user_id        TEXT,
  installation   TEXT    NOT NULL,           -- JSON as Bolt gives it
  updated_at     BIGINT  NOT NULL,
  PRIMARY KEY (team_id, enterprise_id)
);

-- The health probe's committed write (one row per replica: replicas do not contend on it).
CREATE TABLE store_health (
  replica_id  TEXT    PRIMARY KEY,
  probed_at   BIGINT  NOT NULL
);

CREATE TABLE replicas (
  replica_id    TEXT    PRIMARY KEY,
  started_at    BIGINT  NOT NULL,
  heartbeat_at  BIGINT  NOT NULL
);

CREATE TABLE place_leases (
  place_key    TEXT    PRIMARY KEY,
  holder       TEXT    NOT NULL,
  acquired_at  BIGINT  NOT NULL,
  renewed_at   BIGINT  NOT NULL
);

CREATE TABLE learned_budgets (
  bucket_key          TEXT              PRIMARY KEY,
  per_minute          DOUBLE PRECISION  NOT NULL,
  burst               DOUBLE PRECISION  NOT NULL,
  limited_at          BIGINT,
  limited_per_minute  DOUBLE PRECISION,
  updated_at          BIGINT            NOT NULL
);
