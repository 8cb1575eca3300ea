import { DiscordAPIError, RateLimitError } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { PlatformRateLimitedError, PlatformWriteError } from '../../core/ports.js';
import { silentLogger } from '../../logger.js';
import { toPlatformError } from './errors.js';
import { stripBotMention, threadName } from './events.js';
import { INVITE_PERMISSIONS, inviteUrl } from './invite.js';
import { DiscordRateLimitFeed, globalRequestsPerSecond } from './rate-limits.js';

describe('discord helpers', () => {
  it('strips both mention forms of the bot and nothing else', () => {
    expect(stripBotMention('<@42> hi <@!42> there <@7>', '42')).toBe('hi there <@7>');
    expect(stripBotMention('<@42>', '42')).toBe('');
  });

  it('names threads from the first words, at most 100 characters', () => {
    expect(threadName('  How\ndo   I  ', 'x')).toBe('How do I');
    expect(threadName('', 'Conversation with ann')).toBe('Conversation with ann');
    const long = threadName('word '.repeat(60), 'x');
    expect(long.length).toBeLessThanOrEqual(100);
    expect(long.endsWith('word…')).toBe(true);
    expect(threadName('a'.repeat(300), 'x').length).toBeLessThanOrEqual(100);
  });

  it("discord.js's own global limit per replica follows its share of the bot's 50 a second", () => {
    expect(globalRequestsPerSecond(1)).toBe(50);
    expect(globalRequestsPerSecond(1 / 2)).toBe(25);
    expect(globalRequestsPerSecond(1 / 3)).toBe(16);
    expect(globalRequestsPerSecond(1 / 100)).toBe(1);
  });

  it('maps REST paths to the bridge bucket keys', () => {
    const feed = new DiscordRateLimitFeed({ observe: () => {}, limited: () => {} }, silentLogger);
    expect(feed.keyForPath('/channels/123/messages')).toBe('discord:channel:123');
    expect(feed.keyForPath('/api/v10/channels/123/messages/456')).toBe('discord:channel:123');
    expect(feed.keyForPath('/channels/123/messages?limit=31', 'GET')).toBe('discord:channel:123:read');
    expect(feed.keyForPath('/channels/123/typing')).toBeUndefined();
    expect(feed.keyForPath('/channels/123/messages/456/threads')).toBeUndefined();
    expect(feed.keyForPath('/webhooks/1/tok/messages/@original')).toBeUndefined();
    feed.registerInteraction('tok', '99');
    expect(feed.keyForPath('/webhooks/1/tok/messages/@original')).toBe('discord:interaction:99');
    expect(feed.keyForPath('/webhooks/1/tok')).toBe('discord:interaction:99');
  });

  it("rejects (for the scheduler) only route limits of reply writes, never discord.js's own global limit", () => {
    const limited: string[] = [];
    const feed = new DiscordRateLimitFeed({ observe: () => {}, limited: (b) => limited.push(b) }, silentLogger);
    const data = (over: { global: boolean; method: string; url: string }) => ({
      timeToReset: 800,
      limit: 5,
      hash: 'h',
      route: '/channels/:id/messages',
      majorParameter: '1',
      retryAfter: 800,
      sublimitTimeout: 0,
      scope: 'user' as const,
      ...over,
    });
    const url = 'http://127.0.0.1/api/v10/channels/123/messages';
    expect(feed.shouldReject(data({ global: false, method: 'POST', url }))).toBe(true);
    expect(feed.shouldReject(data({ global: true, method: 'POST', url }))).toBe(false);
    expect(limited).toEqual([]); // a global wait blocks no channel bucket
    expect(
      feed.shouldReject(data({ global: false, method: 'POST', url: 'http://127.0.0.1/api/v10/channels/123/typing' })),
    ).toBe(false);
  });

  it('turns SDK errors into the core error types', () => {
    const rl = new RateLimitError({
      timeToReset: 1200,
      limit: 5,
      method: 'PATCH',
      hash: 'h',
      url: 'u',
      route: '/channels/:id/messages/:id',
      majorParameter: '1',
      global: false,
      retryAfter: 0,
      sublimitTimeout: 0,
      scope: 'user',
    });
    const mapped = toPlatformError(rl, 'discord:channel:1');
    expect(mapped).toBeInstanceOf(PlatformRateLimitedError);
    expect((mapped as PlatformRateLimitedError).retryAfterMs).toBe(1200);
    const unknown = new DiscordAPIError({ code: 10008, message: 'Unknown Message' }, 10008, 404, 'PATCH', 'u', {});
    const w = toPlatformError(unknown, 'b');
    expect(w).toBeInstanceOf(PlatformWriteError);
    expect((w as PlatformWriteError).code).toBe('unknown_message');
    expect((w as PlatformWriteError).retryable).toBe(false);
    expect((toPlatformError(new Error('ECONNREFUSED'), 'b') as PlatformWriteError).retryable).toBe(true);
  });

  it('builds an invite link with the bot and commands scopes and only the needed permissions', () => {
    const url = new URL(inviteUrl('123'));
    expect(url.searchParams.get('scope')).toBe('bot applications.commands');
    expect(BigInt(url.searchParams.get('permissions') ?? '0')).toBe(INVITE_PERMISSIONS);
    // View Channels, Send Messages, Send in Threads, Create Public Threads, Read History
    expect(INVITE_PERMISSIONS).toBe((1n << 10n) | (1n << 11n) | (1n << 38n) | (1n << 35n) | (1n << 16n));
  });
});
