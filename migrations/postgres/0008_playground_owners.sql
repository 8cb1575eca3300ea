-- As SQLite's migration 0011: who owns each playground conversation (the browser that first
-- wrote in it), so no other browser reads or writes it, after a restart or from another replica.
CREATE TABLE playground_owners (
  conversation  TEXT    PRIMARY KEY,
  owner         TEXT    NOT NULL,
  claimed_at    BIGINT  NOT NULL
);
CREATE INDEX playground_owners_claimed_at ON playground_owners (claimed_at);
