-- Slack OAuth install links, as SQLite's migration 0006: each link's `state` is good once and
-- for 10 minutes, and the redirect from Slack may reach any replica. The connector stores a
-- digest of the value, never the value in the link itself.
CREATE TABLE oauth_states (
  state       TEXT    PRIMARY KEY,
  expires_at  BIGINT  NOT NULL              -- epoch ms; good through this instant
);
CREATE INDEX oauth_states_expires_at ON oauth_states (expires_at);
