import type { DiscordConfig } from '../config/config.js';
import { type Answer, excerpt, type CheckClient, CheckError, showUrl } from './http.js';
import { type CheckRow, fail, ok, skip } from './types.js';

// Discord: the bot token (GET /users/@me), the privileged Message Content intent (the
// application's flags), and the invite URL with the permissions the bridge needs.

const GATEWAY_MESSAGE_CONTENT = 1 << 18;
const GATEWAY_MESSAGE_CONTENT_LIMITED = 1 << 19;

/** View Channels, Send Messages, Send Messages in Threads, Create Public Threads, Read Message History. */
export const INVITE_PERMISSIONS = (1n << 10n) | (1n << 11n) | (1n << 38n) | (1n << 35n) | (1n << 16n);

export function inviteUrl(clientId: string): string {
  const q = `client_id=${encodeURIComponent(clientId)}&scope=bot+applications.commands&permissions=${INVITE_PERMISSIONS}`;
  return `https://discord.com/oauth2/authorize?${q}`;
}

export async function checkDiscord(discord: DiscordConfig | undefined, http: CheckClient): Promise<CheckRow[]> {
  if (!discord) return [skip('discord', 'not configured (set DISCORD_BOT_TOKEN)')];
  const headers = { authorization: `Bot ${discord.botToken}`, accept: 'application/json' };
  const get = (path: string) => http.get(`${discord.apiUrl}/v10${path}`, headers);

  let me: Answer;
  try {
    me = await get('/users/@me');
  } catch (err) {
    if (!(err instanceof CheckError)) throw err;
    return [
      fail('discord /users/@me', `${showUrl(discord.apiUrl)}: ${err.message}`, 'check DISCORD_API_URL and the network'),
      skip('discord message content', 'token not checked'),
      skip('discord invite', 'token not checked'),
    ];
  }
  if (me.status !== 200) {
    return [
      fail(
        'discord /users/@me',
        `refused (${me.status}): ${excerpt(me)}`,
        me.status === 401
          ? 'DISCORD_BOT_TOKEN was refused (401): copy the token from Developer Portal > Bot (Reset Token if lost)'
          : `Discord answered ${me.status}: check DISCORD_API_URL and the token`,
      ),
      skip('discord message content', 'token refused'),
      skip('discord invite', 'token refused'),
    ];
  }
  const user = me.json as { id?: unknown; username?: unknown };
  const rows = [ok('discord /users/@me', `bot @${String(user.username ?? '?')} (${String(user.id ?? '?')})`)];

  let app: Answer;
  try {
    app = await get('/applications/@me');
  } catch (err) {
    if (!(err instanceof CheckError)) throw err;
    return [
      ...rows,
      fail('discord message content', err.message, 'try again'),
      skip('discord invite', 'no application'),
    ];
  }
  const body = app.json as { id?: unknown; flags?: unknown } | undefined;
  if (app.status !== 200 || body === undefined) {
    return [
      ...rows,
      skip(
        'discord message content',
        `application not readable (${app.status}); check the intent in the Developer Portal`,
      ),
      typeof user.id === 'string'
        ? ok('discord invite', inviteUrl(user.id))
        : skip('discord invite', 'no application id'),
    ];
  }
  const flags = typeof body.flags === 'number' ? body.flags : 0;
  rows.push(
    flags & (GATEWAY_MESSAGE_CONTENT | GATEWAY_MESSAGE_CONTENT_LIMITED)
      ? ok('discord message content', 'Message Content intent enabled')
      : fail(
          'discord message content',
          'Message Content intent not enabled: mentions arrive without their text',
          'enable Message Content Intent in Developer Portal > Bot > Privileged Gateway Intents',
        ),
  );
  const clientId = typeof body.id === 'string' ? body.id : typeof user.id === 'string' ? user.id : undefined;
  rows.push(clientId ? ok('discord invite', inviteUrl(clientId)) : skip('discord invite', 'no application id'));
  return rows;
}
