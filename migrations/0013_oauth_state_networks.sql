-- Slack OAuth install links: the network of the client that asked for each pending link (IPv4
-- per /24, IPv6 per /48, see oauth-state.ts clientNetwork), so that when the total bound is
-- reached room is made by taking from the network holding the most, never from a lone user's
-- link. Empty for links made before this column or without an address.
ALTER TABLE oauth_states ADD COLUMN network TEXT;
CREATE INDEX oauth_states_network ON oauth_states (network, client);
