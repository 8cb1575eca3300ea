-- OpenAI-compatible upstream forms (issue 40). The conversations CHECK of 0001 knew only the
-- flavors `a` and `b`: the table is rebuilt without it (SQLite cannot drop a CHECK in place), so
-- `chat-completions` and `responses` conversations can be kept too.
CREATE TABLE conversations_new (
  place_key     TEXT    PRIMARY KEY,
  platform      TEXT    NOT NULL,
  workspace_id  TEXT,
  channel_id    TEXT    NOT NULL,
  thread_id     TEXT,
  bot_id        TEXT    NOT NULL,
  flavor        TEXT    NOT NULL,             -- ChatService.flavor
  upstream_id   TEXT,
  created_at    INTEGER NOT NULL,
  last_used_at  INTEGER NOT NULL
);
INSERT INTO conversations_new (place_key, platform, workspace_id, channel_id, thread_id, bot_id, flavor, upstream_id, created_at, last_used_at)
  SELECT place_key, platform, workspace_id, channel_id, thread_id, bot_id, flavor, upstream_id, created_at, last_used_at
  FROM conversations;
DROP TABLE conversations;
ALTER TABLE conversations_new RENAME TO conversations;
CREATE INDEX conversations_last_used_at ON conversations (last_used_at);

-- A stateless upstream (Chat Completions) is sent the conversation each turn: its turns, user and
-- assistant text as the user saw them, keyed by the bridge-minted conversation id. Bounded per
-- conversation on every append (a turn count and a character budget, oldest first); deleted with
-- the conversation's mapping (a reset), and by the conversations' retention.
CREATE TABLE transcript_turns (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,  -- the order of the turns
  conversation_id  TEXT    NOT NULL,
  role             TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
  text             TEXT    NOT NULL,
  at               INTEGER NOT NULL                    -- epoch ms
);
CREATE INDEX transcript_turns_conversation ON transcript_turns (conversation_id, id);
CREATE INDEX transcript_turns_at ON transcript_turns (at);
