-- Who owns each playground conversation: the browser (its derived user id) that first wrote in
-- it. Kept in the store, beside the conversation, so that neither a restart nor a flood of claims
-- that pushes it out of the playground's memory lets another browser read or write it. A row
-- outlives its conversation mapping by a day at most (the store's housekeeping).
CREATE TABLE playground_owners (
  conversation  TEXT    PRIMARY KEY,            -- the page's conversation id (the place's channel)
  owner         TEXT    NOT NULL,               -- userIdOf(caller): a digest, never the cookie
  claimed_at    INTEGER NOT NULL                -- epoch ms
);
CREATE INDEX playground_owners_claimed_at ON playground_owners (claimed_at);
