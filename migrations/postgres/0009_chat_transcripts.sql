-- A stateless upstream (Chat Completions, issue 40) is sent the conversation each turn: its turns,
-- user and assistant text as the user saw them, keyed by the bridge-minted conversation id. Bounded
-- per conversation on every append (a turn count and a character budget, oldest first); deleted
-- with the conversation's mapping (a reset), and by the conversations' retention.
CREATE TABLE transcript_turns (
  id               BIGSERIAL PRIMARY KEY,             -- the order of the turns
  conversation_id  TEXT      NOT NULL,
  role             TEXT      NOT NULL CHECK (role IN ('user', 'assistant')),
  text             TEXT      NOT NULL,
  at               BIGINT    NOT NULL                 -- epoch ms
);
CREATE INDEX transcript_turns_conversation ON transcript_turns (conversation_id, id);
CREATE INDEX transcript_turns_at ON transcript_turns (at);
