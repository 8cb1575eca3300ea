import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { discordTokenProblems } from './discord-token.js';
import { envSchema } from './env-schema.js';

const raw = (token: string) => envSchema.parse({ DISCORD_BOT_TOKEN: token });
const upstream = { CHAT_API_URL: 'http://127.0.0.1:1', CHAT_API_KEY: 'k', CHAT_BOT_ID: 'b' };

describe('DISCORD_BOT_TOKEN shape', () => {
  it('takes three base64url parts joined by dots', () => {
    expect(discordTokenProblems(raw('MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz_-0123'))).toEqual({
      problems: [],
      warnings: [],
    });
  });

  it('a "Bot " (or "Bearer ") prefix is a configuration error that says the bridge adds it', () => {
    expect(discordTokenProblems(raw('Bot MTIz.GaBc.xyz')).problems).toEqual([
      'DISCORD_BOT_TOKEN starts with "Bot ": put only the token itself (the bridge adds "Bot " when it calls Discord)',
    ]);
    expect(discordTokenProblems(raw('bearer MTIz.GaBc.xyz')).problems[0]).toMatch(
      /^DISCORD_BOT_TOKEN starts with "bearer "/,
    );
    expect(() => loadConfig({ ...upstream, DISCORD_BOT_TOKEN: 'Bot MTIz.GaBc.xyz' })).toThrow(ConfigError);
  });

  it('any other shape is warned about (a proxy may issue its own), never with the token in the text', () => {
    const { problems, warnings } = discordTokenProblems(raw('not-a-real-token'));
    expect(problems).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^DISCORD_BOT_TOKEN does not look like a Discord bot token \(three parts joined by dots/,
    );
    expect(warnings[0]).toContain('Developer Portal');
    expect(warnings[0]).not.toContain('not-a-real-token');
    expect(() => loadConfig({ ...upstream, DISCORD_BOT_TOKEN: 'not-a-real-token' })).not.toThrow();
  });
});
