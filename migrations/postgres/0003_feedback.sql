-- Thumbs up/down on replies (FEEDBACK), as SQLite's migration 0005. A finished reply that showed
-- the buttons is remembered (so a vote on any replica, or after a restart, still knows its place
-- and upstream conversation), and each user's last vote on a reply is kept until it was sent
-- upstream with their next message and after.
CREATE TABLE feedback_replies (
  reply_key    TEXT    PRIMARY KEY,          -- the key in the buttons (WriteOptions.replyKey)
  platform     TEXT    NOT NULL,
  place_key    TEXT    NOT NULL,
  upstream_id  TEXT,                         -- the upstream conversation, when it was named
  message_id   TEXT    NOT NULL,             -- the upstream's reply id, else the platform message id
  finished_at  BIGINT  NOT NULL              -- epoch ms
);
CREATE INDEX feedback_replies_finished_at ON feedback_replies (finished_at);

CREATE TABLE feedback_votes (
  reply_key     TEXT    NOT NULL,
  user_id       TEXT    NOT NULL,
  place_key     TEXT    NOT NULL,
  upstream_id   TEXT,
  message_id    TEXT    NOT NULL,
  vote          TEXT    NOT NULL CHECK (vote IN ('up', 'down')),
  voted_at      BIGINT  NOT NULL,            -- epoch ms
  delivered_at  BIGINT,                      -- NULL until sent upstream as metadata.feedback
  PRIMARY KEY (reply_key, user_id)
);
CREATE INDEX feedback_votes_pending ON feedback_votes (upstream_id, user_id, delivered_at);
