-- Slack OAuth install links: each link's `state` is good once and for 10 minutes. Kept here
-- rather than in one process's memory so that the redirect from Slack may reach any replica.
-- The connector stores a digest of the value, never the value in the link itself.
CREATE TABLE oauth_states (
  state       TEXT    PRIMARY KEY,
  expires_at  INTEGER NOT NULL              -- epoch ms; good through this instant
);
CREATE INDEX oauth_states_expires_at ON oauth_states (expires_at);
