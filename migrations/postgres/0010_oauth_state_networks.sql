-- As SQLite's migration 0011: the network of the client that asked for each pending install
-- link, so that the total bound takes from the network holding the most, never from a lone user.
ALTER TABLE oauth_states ADD COLUMN network TEXT;
CREATE INDEX oauth_states_network ON oauth_states (network, client);
