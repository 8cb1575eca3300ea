-- Slack OAuth install links: the client address that asked for each pending link, so that one
-- address holds only a few at a time (429 beyond) and a flood from it cannot push anyone else's
-- pending install out. Empty for links made without an address.
ALTER TABLE oauth_states ADD COLUMN client TEXT;
CREATE INDEX oauth_states_client ON oauth_states (client, expires_at);
