-- What a playground page showed of each turn (issue 41): the message typed, its reply's messages
-- as they ended (state, text, key, thumbs), the steps, sources (in the text) and files, and a
-- Retry's mark. Memory kept it until a restart; the history route reads it back. Bounded per
-- conversation on every save (the playground's KEPT_PER_CONVERSATION, oldest first); deleted with
-- the conversation's mapping (a reset), and by the conversations' retention.
CREATE TABLE playground_turns (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,  -- the order of the turns (a save keeps its first id)
  conversation  TEXT    NOT NULL,                   -- the page's conversation id (the place's channel)
  turn_id       TEXT    NOT NULL,                   -- the eventId `send` returned
  shown         TEXT    NOT NULL,                   -- JSON, the playground's (kept-turns.ts)
  at            INTEGER NOT NULL,                   -- epoch ms, the last save
  UNIQUE (conversation, turn_id)
);
CREATE INDEX playground_turns_at ON playground_turns (at);
