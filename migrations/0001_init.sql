-- assistant-bridge: first schema.
-- Conversation mappings: one upstream conversation (Form A conversationId / Form B session_id) per place.
CREATE TABLE conversations (
  place_key     TEXT    PRIMARY KEY,          -- platform:workspace:channel:thread ('-' for none)
  platform      TEXT    NOT NULL,
  workspace_id  TEXT,
  channel_id    TEXT    NOT NULL,
  thread_id     TEXT,
  bot_id        TEXT    NOT NULL,
  form          TEXT    NOT NULL CHECK (form IN ('a', 'b')),
  upstream_id   TEXT,                         -- NULL while a Form A first reply has not revealed it
  created_at    INTEGER NOT NULL,             -- epoch ms
  last_used_at  INTEGER NOT NULL
);

-- Every incoming platform event is handled at most once; kept 24 hours.
CREATE TABLE processed_events (
  platform  TEXT    NOT NULL,
  event_id  TEXT    NOT NULL,
  seen_at   INTEGER NOT NULL,
  PRIMARY KEY (platform, event_id)
) WITHOUT ROWID;
CREATE INDEX processed_events_seen_at ON processed_events (seen_at);

-- Replies being streamed, so that a restart can mark the ones a crash left half-written.
CREATE TABLE replies_in_flight (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  platform     TEXT    NOT NULL,
  event_id     TEXT    NOT NULL,
  target       TEXT    NOT NULL,              -- JSON ReplyTarget
  message_ids  TEXT    NOT NULL DEFAULT '[]', -- JSON array of platform message ids, in order
  last_text    TEXT    NOT NULL DEFAULT '',   -- text of the last message as last written
  upstream_id  TEXT,
  state        TEXT    NOT NULL DEFAULT 'streaming'
               CHECK (state IN ('streaming', 'done', 'interrupted', 'failed')),
  started_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
CREATE INDEX replies_in_flight_state ON replies_in_flight (state, updated_at);

-- Slack OAuth installations (multi-workspace mode). Bolt's installation store needs the tokens.
CREATE TABLE slack_installations (
  team_id        TEXT    NOT NULL DEFAULT '',
  enterprise_id  TEXT    NOT NULL DEFAULT '',
  user_id        TEXT,
  installation   TEXT    NOT NULL,            -- JSON as Bolt gives it
  updated_at     INTEGER NOT NULL,
  PRIMARY KEY (team_id, enterprise_id)
);
