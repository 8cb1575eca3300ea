-- As SQLite's migration 0008: the client address of each pending install link, so that one
-- address holds only a few at a time and a flood from it evicts nobody else's.
ALTER TABLE oauth_states ADD COLUMN client TEXT;
CREATE INDEX oauth_states_client ON oauth_states (client, expires_at);
