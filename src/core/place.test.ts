import { describe, expect, it } from 'vitest';
import { botRouter, expectedOf, type PlaceRoute } from './place.js';

// BOT_ROUTES as config/routes.ts parses `slack:T1=bot1,slack:T1/C2=bot2,discord:G1=bot3,discord:G1/C4=bot4`.
const routes: PlaceRoute[] = [
  { platform: 'slack', workspaceId: 'T1', botId: 'bot1' },
  { platform: 'slack', workspaceId: 'T1', channelId: 'C2', botId: 'bot2' },
  { platform: 'discord', workspaceId: 'G1', botId: 'bot3' },
  { platform: 'discord', workspaceId: 'G1', channelId: 'C4', botId: 'bot4' },
];

describe('botRouter', () => {
  const botFor = botRouter(routes, 'default-bot');
  it('takes the most specific match', () => {
    expect(botFor({ platform: 'slack', workspaceId: 'T1', channelId: 'C2' })).toBe('bot2');
    expect(botFor({ platform: 'slack', workspaceId: 'T1', channelId: 'C3' })).toBe('bot1');
    expect(botFor({ platform: 'discord', workspaceId: 'G1', channelId: 'C4' })).toBe('bot4');
    expect(botFor({ platform: 'discord', workspaceId: 'G1', channelId: 'C9' })).toBe('bot3');
    expect(botFor({ platform: 'discord', workspaceId: 'T1', channelId: 'C2' })).toBe('default-bot');
  });
  it('is order independent for specificity; of equal routes the first wins', () => {
    const r: PlaceRoute[] = [
      { platform: 'slack', workspaceId: 'T1', channelId: 'C2', botId: 'bot2' },
      { platform: 'slack', workspaceId: 'T1', botId: 'bot1' },
      { platform: 'slack', workspaceId: 'T1', botId: 'late' },
      { platform: 'slack', workspaceId: 'T1', channelId: 'C2', botId: 'late' },
    ];
    const b = botRouter(r, 'default-bot');
    expect(b({ platform: 'slack', workspaceId: 'T1', channelId: 'C2' })).toBe('bot2');
    expect(b({ platform: 'slack', workspaceId: 'T1', channelId: 'C3' })).toBe('bot1');
  });
  it('gives places no route names (no workspace, other platforms) the default bot', () => {
    expect(botFor({ platform: 'discord', channelId: 'D1' })).toBe('default-bot');
    expect(botFor({ platform: 'slack', channelId: 'C2' })).toBe('default-bot');
    expect(botFor({ platform: 'test', workspaceId: 'T1', channelId: 'C2' })).toBe('default-bot');
    expect(botFor({ platform: 'playground', workspaceId: 'T1', channelId: 'C2' })).toBe('default-bot');
  });
});

describe('expectedOf', () => {
  it('says none, a mapping without an upstream id yet, or the id', () => {
    expect(expectedOf(undefined)).toBeUndefined();
    expect(expectedOf({ upstreamId: undefined })).toBeNull();
    expect(expectedOf({ upstreamId: 'c1' })).toBe('c1');
  });
});
