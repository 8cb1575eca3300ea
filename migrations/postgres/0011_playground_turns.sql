-- As SQLite's migration 0014: what a playground page showed of each turn (issue 41), so a reload
-- after a restart (or on another replica) shows it again. Bounded per conversation on every save;
-- deleted with the conversation's mapping (a reset), and by the conversations' retention.
CREATE TABLE playground_turns (
  id            BIGSERIAL PRIMARY KEY,             -- the order of the turns (a save keeps its first id)
  conversation  TEXT      NOT NULL,
  turn_id       TEXT      NOT NULL,
  shown         TEXT      NOT NULL,
  at            BIGINT    NOT NULL,
  UNIQUE (conversation, turn_id)
);
CREATE INDEX playground_turns_at ON playground_turns (at);
