import type { RawEnv } from './env-schema.js';

// The shape of a Discord bot token, checked before any network call (as slack-tokens.ts does for
// Slack): three base64url parts joined by dots (the bot's id, a timestamp, an HMAC). An
// `Authorization` scheme pasted with it (`Bot …`, `Bearer …`) is a configuration error: the
// bridge adds `Bot ` itself, so Discord would get `Bot Bot …` and refuse it. Any other shape is
// only warned about (a proxy or a test double may issue its own).

const WHERE = 'the bot token from the Developer Portal (Applications > your app > Bot > Reset Token)';
const TOKEN_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export function discordTokenProblems(raw: RawEnv): { problems: string[]; warnings: string[] } {
  const token = raw.DISCORD_BOT_TOKEN;
  if (token === undefined) return { problems: [], warnings: [] };
  const scheme = /^(Bot|Bearer)\s+/i.exec(token);
  if (scheme !== null) {
    return {
      problems: [
        `DISCORD_BOT_TOKEN starts with "${scheme[1] ?? ''} ": put only the token itself (the bridge adds "Bot " when it calls Discord)`,
      ],
      warnings: [],
    };
  }
  if (!TOKEN_SHAPE.test(token)) {
    return {
      problems: [],
      warnings: [
        `DISCORD_BOT_TOKEN does not look like a Discord bot token (three parts joined by dots, e.g. MTIz….GhIj….xYz…): it takes ${WHERE}`,
      ],
    };
  }
  return { problems: [], warnings: [] };
}
