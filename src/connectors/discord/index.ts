export { createDiscordConnector, type DiscordConnector, type DiscordConnectorOptions } from './connector.js';
export { inviteUrl } from './invite.js';
