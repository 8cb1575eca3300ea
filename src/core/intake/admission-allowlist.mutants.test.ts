import { describe, expect, it } from 'vitest';
import { ALLOW_ALL, type AllowList, isAllowed } from './admission.js';
import type { IncomingMessage } from '../ports.js';
import type { Place } from '../place.js';

// Each rule of the allowlists on its own, so that a changed comparison shows (mutation testing).

const none: AllowList = { workspaces: [], channels: [] };

function msg(origin: Place, place: Place = origin): IncomingMessage {
  // isAllowed reads only these two.
  return { place, origin } as IncomingMessage;
}

const slack = (p: Omit<Place, 'platform'>): Place => ({ platform: 'slack', ...p });

describe('isAllowed', () => {
  it('accepts everything when both lists are empty', () => {
    const allow = { slack: none, discord: none };
    expect(isAllowed(allow, msg(slack({ workspaceId: 'T9', channelId: 'C9' })))).toBe(true);
    expect(isAllowed(allow, msg(slack({ channelId: 'D9' })))).toBe(true);
  });

  it('the test platform is never filtered', () => {
    const allow = {
      slack: { workspaces: ['T1'], channels: ['C1'] },
      discord: { workspaces: ['G1'], channels: ['K1'] },
    };
    expect(isAllowed(allow, msg({ platform: 'test', channelId: 'X' }))).toBe(true);
  });

  it('a workspace list checks where the message was written, and refuses a message without a workspace', () => {
    const allow = { slack: { workspaces: ['T1'], channels: [] }, discord: none };
    expect(isAllowed(allow, msg(slack({ workspaceId: 'T1', channelId: 'C5' })))).toBe(true);
    expect(isAllowed(allow, msg(slack({ workspaceId: 'T2', channelId: 'C5' })))).toBe(false);
    expect(isAllowed(allow, msg(slack({ channelId: 'D5' })))).toBe(false);
    // The origin counts, not the place.
    expect(
      isAllowed(
        allow,
        msg(slack({ workspaceId: 'T2', channelId: 'C5' }), slack({ workspaceId: 'T1', channelId: 'C5' })),
      ),
    ).toBe(false);
  });

  it("uses the platform's own list", () => {
    const allow = { slack: none, discord: { workspaces: ['G1'], channels: [] } };
    expect(isAllowed(allow, msg(slack({ workspaceId: 'T2', channelId: 'C5' })))).toBe(true);
    expect(isAllowed(allow, msg({ platform: 'discord', workspaceId: 'T2', channelId: 'C5' }))).toBe(false);
    expect(isAllowed(allow, msg({ platform: 'discord', workspaceId: 'G1', channelId: 'C5' }))).toBe(true);
  });

  it('a channel list accepts the channel or thread of the origin or of the place, and nothing else', () => {
    const allow = { slack: { workspaces: [], channels: ['A'] }, discord: none };
    const other = slack({ workspaceId: 'T1', channelId: 'Z', threadId: 'Y' });
    expect(isAllowed(allow, msg(other))).toBe(false);
    expect(isAllowed(allow, msg({ ...other, channelId: 'A' }, other))).toBe(true);
    expect(isAllowed(allow, msg({ ...other, threadId: 'A' }, other))).toBe(true);
    expect(isAllowed(allow, msg(other, { ...other, channelId: 'A' }))).toBe(true);
    expect(isAllowed(allow, msg(other, { ...other, threadId: 'A' }))).toBe(true);
    expect(isAllowed(allow, msg(slack({ channelId: 'Z' })))).toBe(false);
  });

  it('both lists must agree', () => {
    const allow = { slack: { workspaces: ['T1'], channels: ['A'] }, discord: none };
    expect(isAllowed(allow, msg(slack({ workspaceId: 'T1', channelId: 'A' })))).toBe(true);
    expect(isAllowed(allow, msg(slack({ workspaceId: 'T1', channelId: 'B' })))).toBe(false);
    expect(isAllowed(allow, msg(slack({ workspaceId: 'T2', channelId: 'A' })))).toBe(false);
  });

  it('ALLOW_ALL lets every workspace and channel through', () => {
    const allow = { slack: ALLOW_ALL, discord: ALLOW_ALL };
    expect(isAllowed(allow, msg(slack({ workspaceId: 'T9', channelId: 'C9' })))).toBe(true);
    expect(isAllowed(allow, msg({ platform: 'discord', workspaceId: 'G9', channelId: 'K9' }))).toBe(true);
  });

  it('the playground is never filtered either', () => {
    const allow = {
      slack: { workspaces: ['T1'], channels: ['C1'] },
      discord: { workspaces: ['G1'], channels: ['K1'] },
    };
    expect(isAllowed(allow, msg({ platform: 'playground', channelId: 'X' }))).toBe(true);
  });

  it('an Enterprise Grid org id admits its workspaces; every workspace of a shared channel must be listed', () => {
    const allow = { slack: { workspaces: ['E1', 'T1'], channels: [] }, discord: none };
    const origin = slack({ workspaceId: 'T7', channelId: 'C5' });
    const from = (...workspaces: Array<{ id: string; organizationId?: string }>) => ({
      ...msg(origin),
      workspaces,
    });
    expect(isAllowed(allow, from({ id: 'T7', organizationId: 'E1' }))).toBe(true);
    expect(isAllowed(allow, from({ id: 'T7', organizationId: 'E2' }))).toBe(false);
    expect(isAllowed(allow, from({ id: 'T7' }))).toBe(false);
    expect(isAllowed(allow, from({ id: 'T1' }, { id: 'T7', organizationId: 'E1' }))).toBe(true);
    expect(isAllowed(allow, from({ id: 'T1' }, { id: 'T8' }))).toBe(false);
    expect(isAllowed(allow, from())).toBe(false);
  });
});
